// The writer of the embedded template's archive (`npm run embedded:template`): a gzipped ustar tarball of a PGlite
// data folder that PostgreSQL shut down cleanly, read back by unpackTemplate (#runtime/db/embedded-data.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** The size of a tar block: headers and each file's data (padded) come in blocks of 512 bytes. */
const TAR_BLOCK_BYTES = 512;
/** The longest path a ustar header's name field holds (no prefix field is written). */
const TAR_NAME_BYTES = 100;

/**
 * The files and folders under `folder` (relative paths, folders before what they hold, names sorted) as a gzipped
 * ustar tarball: folders of type 5, files of type 0, each with its modification time. Throws on anything else (a link
 * in a data folder would be a tablespace, which the embedded database has none of) and on a path too long for the
 * name field.
 */
export function packTemplate(folder: string): Buffer {
  const blocks: Buffer[] = [];
  const add = (path: string) => {
    const stat = statSync(join(folder, path));
    if (stat.isDirectory()) {
      blocks.push(header(`${path}/`, '5', 0o700, 0, stat.mtimeMs));
      for (const name of readdirSync(join(folder, path)).sort()) add(path ? `${path}/${name}` : name);
    } else if (stat.isFile()) {
      const data = readFileSync(join(folder, path));
      blocks.push(header(path, '0', 0o600, data.length, stat.mtimeMs), data);
      const padding = (TAR_BLOCK_BYTES - (data.length % TAR_BLOCK_BYTES)) % TAR_BLOCK_BYTES;
      if (padding) blocks.push(Buffer.alloc(padding));
    } else {
      throw new Error(`${join(folder, path)} is neither a file nor a folder`);
    }
  };
  for (const name of readdirSync(folder).sort()) add(name);
  blocks.push(Buffer.alloc(2 * TAR_BLOCK_BYTES)); // the end of the archive
  return gzipSync(Buffer.concat(blocks), { level: 9 });
}

/** One ustar header block. */
function header(path: string, type: '0' | '5', mode: number, size: number, modifiedMs: number): Buffer {
  if (Buffer.byteLength(path) > TAR_NAME_BYTES) throw new Error(`${path}: longer than a tar name (100 bytes)`);
  const block = Buffer.alloc(TAR_BLOCK_BYTES);
  const octal = (value: number, at: number, length: number) =>
    block.write(`${value.toString(8).padStart(length - 1, '0')}\0`, at, length, 'latin1');
  block.write(path, 0, TAR_NAME_BYTES, 'latin1');
  octal(mode, 100, 8);
  octal(0, 108, 8); // uid
  octal(0, 116, 8); // gid
  octal(size, 124, 12);
  octal(Math.floor(modifiedMs / 1000), 136, 12);
  block.write(type, 156, 1, 'latin1');
  block.write('ustar\x0000', 257, 8, 'latin1');
  block.fill(' ', 148, 156); // the checksum is computed with its own field as spaces
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(`${checksum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return block;
}
