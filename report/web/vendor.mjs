// Copies the locked chart library builds from node_modules into vendor/ (committed), so that
// building stepscope needs neither npm nor a network. Run after `npm ci`: `npm run vendor`.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const files = [
  ['vega', 'build/vega.min.js'],
  ['vega-lite', 'build/vega-lite.min.js'],
  ['vega-embed', 'build/vega-embed.min.js'],
];
mkdirSync(join(here, 'vendor'), { recursive: true });
const versions = {};
for (const [pkg, file] of files) {
  const root = join(here, 'node_modules', pkg);
  versions[pkg] = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  copyFileSync(join(root, file), join(here, 'vendor', file.split('/').pop()));
  copyFileSync(join(root, 'LICENSE'), join(here, 'vendor', `${pkg}.LICENSE`));
}
writeFileSync(join(here, 'vendor', 'versions.json'), JSON.stringify(versions, null, 2) + '\n');
console.log('vendored', versions);
