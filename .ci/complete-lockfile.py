#!/usr/bin/env python3
"""Completes package-lock.json with the other platforms' optional binary packages.

The npm registry reachable here serves only this platform's builds of biome, buf, swc and unrs, so `npm install`
writes a lockfile without entries for the others, and `npm ci` then refuses it ("Missing: ... from lock file").
This adds one entry per missing optional dependency, with its version and its os/cpu/libc, which is exactly what
`npm ci` needs to skip it on a platform it does not fit. Run after `npm install` changed the lockfile:

    python3 .ci/complete-lockfile.py          # fix in place
    python3 .ci/complete-lockfile.py --check  # exit 1 if something is missing (npm run check does this)
"""
import json
import re
import sys

PATH = 'package-lock.json'
OSES = ['android', 'darwin', 'linux', 'win32', 'freebsd', 'openharmony']
CPUS = [('arm64', 'arm64'), ('x64', 'x64'), ('ia32', 'ia32'), ('armv7', 'arm'), ('arm-', 'arm'), ('ppc64', 'ppc64'),
        ('s390x', 's390x'), ('riscv64', 'riscv64'), ('loong64', 'loong64')]


def platform(name):
    base = name.split('/')[-1]
    entry = {}
    cpu = next((value for needle, value in CPUS if needle in base), None)
    if cpu:
        entry['cpu'] = [cpu]
    os_name = next((o for o in OSES if o in base), None)
    if os_name == 'linux':
        entry['libc'] = ['musl' if 'musl' in base else 'glibc']
    if os_name:
        entry['os'] = [os_name]
    return entry


def main():
    lock = json.load(open(PATH))
    packages = lock['packages']
    added = []
    for path, meta in list(packages.items()):
        for name, spec in (meta.get('optionalDependencies') or {}).items():
            key = f'node_modules/{name}'
            if key in packages or f'{path}/{key}' in packages:
                continue
            if not platform(name).get('os'):
                continue  # not a platform binary: leave it to npm
            packages[key] = {'version': re.sub(r'^[\^~=]', '', spec), 'optional': True, **platform(name)}
            added.append(name)
    if '--check' in sys.argv:
        if added:
            print(f'package-lock.json lacks {len(added)} optional platform packages ({", ".join(added[:3])}, ...): '
                  'run python3 .ci/complete-lockfile.py', file=sys.stderr)
            sys.exit(1)
        print('package-lock.json is complete for npm ci')
        return
    with open(PATH, 'w') as out:
        json.dump(lock, out, indent=2)
        out.write('\n')
    print(f'added {len(added)} entries' if added else 'nothing to add')


main()
