// Copies the chart library's browser files from node_modules into web/vendor/, the
// only place the coordinator serves third-party code from (no CDN, same origin).
import { copyFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = [
  ['node_modules/uplot/dist/uPlot.esm.js', 'vendor/uplot.esm.js'],
  ['node_modules/uplot/dist/uPlot.min.css', 'vendor/uplot.min.css'],
  ['node_modules/uplot/LICENSE', 'vendor/uplot.LICENSE'],
];
mkdirSync(join(web, 'vendor'), { recursive: true });
for (const [from, to] of files) {
  const src = join(web, from);
  if (!existsSync(src)) {
    console.error(`vendor: ${from} is missing; run npm ci --prefix web`);
    process.exit(1);
  }
  copyFileSync(src, join(web, to));
}
console.log(`vendor: copied ${files.length} files into web/vendor/`);
