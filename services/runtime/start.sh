# Starts one program: `sh services/runtime/start.sh <entry file> [arguments]`, as the npm start scripts and the
# image's ENTRYPOINT do. It reads node's flags and the start environment from node-flags beside it (why each is there),
# adds the tracing register file (it does nothing unless an OTLP endpoint is set, and must load before the program's
# modules for ESM instrumentation), and execs node, so that node is the process that receives SIGTERM.
# PROGRAM_NODE: the node to run (default: node on PATH; not NODE, which npm sets to its own node).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
flags=
while IFS= read -r line || [ -n "$line" ]; do
  case $line in
    '#'* | '') ;;
    --*) flags="$flags $line" ;;
    *=*) eval "[ -n \"\${${line%%=*}+set}\" ]" || export "${line?}" ;; # unless set already: the caller's wins
    *) echo "start.sh: unreadable line in $here/node-flags: $line" >&2 && exit 2 ;;
  esac
done <"$here/node-flags"
# shellcheck disable=SC2086 # the flags are words, one each
exec "${PROGRAM_NODE:-node}" $flags --import "$here/src/tracing/register.ts" "$@"
