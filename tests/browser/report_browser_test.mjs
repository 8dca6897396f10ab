// Browser test of the HTML report: headless Chromium (the system's /usr/bin/chromium, driven by
// playwright-core; no browser is ever downloaded) opens a generated report with every network
// request blocked, and checks that there are no console errors, that each chart rendered the
// expected series and points, and that hostile names show as text. Saves a screenshot.
//
// Environment: STEPSCOPE (binary), REPORT_FIXTURE (binary), ARTIFACT_DIR (screenshot, report),
// CHROMIUM (default /usr/bin/chromium). Exit 77 (skip) when Chromium or playwright-core is absent.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Under CI=true every dependency is installed by the test command: a skip is a failure there.
const SKIP = process.env.CI === 'true' ? 1 : 77;
const here = dirname(fileURLToPath(import.meta.url));
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  console.log(`SKIP: ${chromiumPath} not found (run scripts/setup-browser-test.sh)`);
  process.exit(SKIP);
}
let chromium;
try {
  const require = createRequire(join(here, '../../report/web/package.json'));
  ({ chromium } = require('playwright-core'));
} catch (e) {
  console.log('SKIP: playwright-core not installed in report/web/node_modules ' +
              '(run scripts/setup-browser-test.sh)');
  process.exit(SKIP);
}

const stepscope = process.env.STEPSCOPE;
const fixture = process.env.REPORT_FIXTURE;
const artifacts = resolve(process.env.ARTIFACT_DIR || 'browser-artifacts');
mkdirSync(artifacts, { recursive: true });
const HOSTILE = '</script><img src=x onerror=alert(1)> "quoted" & \'single\' <!-- <b>bold</b>';

const failures = [];
function check(ok, what) {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

const diagPath = join(artifacts, 'diagnosis.json');
const htmlPath = join(artifacts, 'report.html');
execFileSync(fixture, [diagPath, '--hostile', '--after', '--priced'], { stdio: 'inherit' });
execFileSync(stepscope, ['report', diagPath, '--html', htmlPath], { stdio: ['ignore', 'ignore', 'inherit'] });
const diag = JSON.parse(readFileSync(diagPath, 'utf8'));

// What each chart must show, from the diagnosis itself.
const n = diag.points.length;
const nAfter = diag.after ? diag.after.points.length : 0;
const largest = diag.points[n - 1];
const expected = {
  scaling: { series: diag.after ? 3 : 2, points: 2 * n + nAfter, marks: '.mark-symbol path' },
  decomposition: { series: 5, points: 5 * n, marks: '.mark-rect path' },
  waterfall: { series: new Set(['ideal', 'measured',
                                ...diag.attribution.lines.map(l => (l.devices >= 0 ? 'lost' : 'gained'))]).size,
               points: diag.attribution.lines.length + 2, marks: '.mark-rect path' },
  skew_compute: { series: largest.skew.straggler_ranks.length ? 2 : 1,
                  points: largest.skew.ranks.length, marks: '.mark-rect path' },
  skew_arrival: { series: largest.skew.straggler_ranks.length ? 2 : 1,
                  points: largest.skew.ranks.length, marks: '.mark-rect path' },
  before_after: { series: 2, points: n + nAfter, marks: '.mark-rect path' },
};
// The goodput curve: the options of the verdict that counts priced in the configuration of more
// and fewer devices (one count each, samples/s and goodput), and the measured points beside them.
{
  const v = diag.after && diag.after.verdict && diag.after.verdict.options.length
    ? diag.after.verdict : diag.verdict;
  const devices = v.options.find(o => o.kind === 'more_devices' || o.kind === 'fewer_devices');
  if (devices) {
    const same = o => JSON.stringify(o.levers) === JSON.stringify(devices.levers) && !o.link &&
      o.device_speed === 1 &&
      ['more_devices', 'fewer_devices', 'stay', 'lever', 'all_levers'].includes(o.kind);
    const counts = new Set(v.options.filter(same).map(o => o.replicas)).size;
    const measured = v === diag.verdict ? n : nAfter;
    expected.goodput = { series: 3, points: 2 * counts + measured, marks: '.mark-symbol.role-mark path' };
  }
}
check(expected.goodput !== undefined, 'the fixture has priced options for the goodput curve');

const profile = mkdtempSync(join(tmpdir(), 'stepscope-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run'],
  viewport: { width: 1200, height: 900 },
});
try {
  const requests = [];
  await context.route('**/*', route => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', e => errors.push(String(e)));
  page.on('request', r => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  await page.addInitScript(() => { window.__alerts = 0; window.alert = () => { window.__alerts++; }; });
  await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
  const ready = await page.evaluate(() => window.stepscopeReady.then(() => true, e => String(e)));
  check(ready === true, `charts rendered (${ready})`);

  for (const [name, want] of Object.entries(expected)) {
    const got = await page.evaluate(([name, marks]) => {
      const view = window.stepscopeViews[name];
      if (!view) return null;
      const rows = view.data(name);
      return {
        series: new Set(rows.map(r => r.series)).size,
        points: rows.length,
        marks: document.querySelectorAll(`#chart-${name} svg ${marks}`).length,
      };
    }, [name, want.marks]);
    check(got !== null, `${name}: chart present`);
    if (!got) continue;
    check(got.series === want.series, `${name}: ${got.series} series (want ${want.series})`);
    check(got.points === want.points, `${name}: ${got.points} points (want ${want.points})`);
    check(got.marks === want.points, `${name}: ${got.marks} marks drawn (want ${want.points})`);
  }
  const lines = await page.evaluate(() => document.querySelectorAll('#chart-scaling svg .mark-line path').length);
  check(lines === expected.scaling.series, `scaling: ${lines} lines drawn (want ${expected.scaling.series})`);

  // Hostile names: nothing injected, the text shows literally.
  const dom = await page.evaluate(() => ({
    imgs: document.querySelectorAll('img').length,
    bolds: [...document.querySelectorAll('b')].filter(b => b.textContent === 'bold').length,
    scripts: document.querySelectorAll('script').length,
    alerts: window.__alerts,
    h1: document.querySelector('h1').textContent,
    metadata: document.querySelector('#metadata').textContent,
    emulated: !!document.querySelector('#emulation'),
  }));
  check(dom.imgs === 0, `no injected <img> (${dom.imgs})`);
  check(dom.bolds === 0, `no injected <b> (${dom.bolds})`);
  check(dom.scripts === 5, `only the page's 5 scripts (${dom.scripts})`);
  check(dom.alerts === 0, `no alert ran (${dom.alerts})`);
  check(dom.h1.includes(HOSTILE), 'hostile workload name shows literally in the title');
  check(dom.metadata.includes(HOSTILE), 'hostile workload name shows literally in the run table');
  check(dom.emulated, 'emulation banner shown');

  check(requests.length === 0, `no network requests (${requests.join(' ')})`);
  check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
  await page.screenshot({ path: join(artifacts, 'report.png'), fullPage: true });
  console.log(`screenshot: ${join(artifacts, 'report.png')}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('all browser checks passed');
