/**
 * Summarises a V8 heap snapshot (`.heapsnapshot`, as `--heapsnapshot-signal` writes it): the
 * heap's self size by node type (code, strings, closures, …) and the largest constructors by
 * their instances' summed self size. Self sizes only: what each object holds itself, not what
 * it keeps alive, which is enough to tell module code from per-session data.
 *
 * Usage: node --import tsx test/bench/heapsnapshot-top.ts <file.heapsnapshot> [top=30]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: heapsnapshot-top.ts <file.heapsnapshot> [top]');
  process.exit(2);
}
const top = Number(topArg ?? 30);
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
const fields = snap.snapshot.meta.node_fields;
const types = snap.snapshot.meta.node_types[0];
const width = fields.length;
const typeAt = fields.indexOf('type');
const nameAt = fields.indexOf('name');
const sizeAt = fields.indexOf('self_size');

const byType = new Map<string, number>();
const byName = new Map<string, { bytes: number; count: number }>();
let total = 0;
for (let i = 0; i < snap.nodes.length; i += width) {
  const type = types[snap.nodes[i + typeAt] as number] ?? '?';
  const size = snap.nodes[i + sizeAt] as number;
  total += size;
  byType.set(type, (byType.get(type) ?? 0) + size);
  // Objects by constructor; everything else by its type (strings, code, arrays…).
  const name =
    type === 'object' || type === 'closure'
      ? `${type} ${snap.strings[snap.nodes[i + nameAt] as number]}`
      : type;
  const entry = byName.get(name) ?? { bytes: 0, count: 0 };
  entry.bytes += size;
  entry.count += 1;
  byName.set(name, entry);
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(2).padStart(7);
console.log(`${file}: ${mb(total)} MB in ${snap.nodes.length / width} nodes\n\nby type:`);
for (const [type, bytes] of [...byType].sort((a, b) => b[1] - a[1])) console.log(`${mb(bytes)} MB  ${type}`);
console.log(`\nlargest ${top} by constructor (self size):`);
for (const [name, { bytes, count }] of [...byName].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top))
  console.log(`${mb(bytes)} MB  ${String(count).padStart(8)}  ${name}`);
