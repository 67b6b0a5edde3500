#!/usr/bin/env node
// Renders lume-metal's charts in headless Chromium, saves each as a PNG and checks what a reader
// sees: node render.mjs --out DIR [--chromium PATH] FILE...
//
// FILE is Markdown (each ```mermaid block rendered by Mermaid, the version package-lock.json pins,
// its browser bundle dist/mermaid.min.js) or an SVG file (shown as it is). One browser for all the
// files, driven over the Chrome DevTools Protocol on a pipe (--remote-debugging-pipe: messages are
// JSON ended by a NUL byte, written to the browser's fd 3 and read from its fd 4;
// chromedevtools.github.io/devtools-protocol/, "Target", "Page", "Runtime"), so no driver package
// and no browser download: Debian's chromium.
//
// The checks, on the rendered DOM (getBoundingClientRect of each element as drawn):
//   - no two texts overlap (by more than a pixel each way);
//   - nothing is cut off: every text and bar lies inside its picture;
//   - a chart with a value axis starts it at 0: its lowest tick reads 0 and the bars stand on it;
//   - every bar carries its figure (a text with a number in the bar's column);
//   - stock, unlocked (shimmed) and bare metal keep their colours (#9e9e9e, #2e7d32, #1565c0).
// Every problem is printed ("FILE chart N: ..."); the exit status is 1 when there is any, 2 when
// the browser or a file could not be used.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let out = null;
let chromium = process.env.LM_CHROMIUM || '/usr/bin/chromium';
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--out') out = args[++i];
  else if (args[i] === '--chromium') chromium = args[++i];
  else files.push(args[i]);
}
if (!out || files.length === 0) {
  console.error('usage: node render.mjs --out DIR [--chromium PATH] FILE...');
  process.exit(2);
}
const mermaidJs = join(here, 'node_modules', 'mermaid', 'dist', 'mermaid.min.js');
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'lm-render-'));

// The page's checks, run in the browser on each chart's <svg> once it is drawn.
function pageChecks() {
  const COLORS = { stock: '#9e9e9e', unlocked: '#2e7d32', shimmed: '#2e7d32', 'bare metal': '#1565c0' };
  const hex = (c) => {
    const m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(c || '');
    if (!m) return (c || '').toLowerCase();
    return '#' + m.slice(1, 4).map((v) => Number(v).toString(16).padStart(2, '0')).join('');
  };
  const number = (s) => {
    const m = /^\s*(-?\d+(?:[.,]\d+)*)\s*$/.exec(s || '');
    return m ? Number(m[1].replace(/,/g, '')) : NaN;
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const st = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none' &&
      Number(st.opacity) !== 0 && Number(el.getAttribute('font-size') ?? 1) !== 0 ? r : null;
  };
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
  const problems = [];
  const svgs = [...document.querySelectorAll('.chart-root > svg')];
  svgs.forEach((svg, n) => {
    const where = `chart ${n + 1}`;
    const box = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')]
      .filter((t) => t.textContent.trim() !== '' && !t.querySelector('text'))
      .map((t) => ({ el: t, text: t.textContent.trim(), r: visible(t) }))
      .filter((t) => t.r);
    for (let i = 0; i < texts.length; i++)
      for (let j = i + 1; j < texts.length; j++)
        if (overlap(texts[i].r, texts[j].r))
          problems.push(`${where}: labels overlap: "${texts[i].text}" and "${texts[j].text}"`);
    // Bars: Mermaid's are the rects of its plot group (class "bar-plot-N"); ours carry class "bar".
    const bars = [...svg.querySelectorAll('rect.bar, g[class^="bar-plot"] rect')]
      .map((el) => ({ el, r: visible(el) })).filter((b) => b.r);
    const inside = (r) => r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 &&
      r.bottom <= box.bottom + 1;
    for (const t of texts) if (!inside(t.r)) problems.push(`${where}: text cut off: "${t.text}"`);
    for (const b of bars) if (!inside(b.r)) problems.push(`${where}: a bar is cut off`);
    // Value axes: ours (g.chart: .tick-label) and Mermaid's (g.left-axis: its tick labels).
    const axes = [...svg.querySelectorAll('g.chart')].map((g) => ({ g, ticks: [...g.querySelectorAll('.tick-label')] }));
    const left = svg.querySelector('g.left-axis');
    if (left) axes.push({ g: svg, ticks: [...left.querySelectorAll('text')] });
    axes.forEach(({ g, ticks }, k) => {
      const chart = axes.length > 1 ? `${where}.${k + 1}` : where;
      const nums = ticks.map((t) => ({ v: number(t.textContent), r: t.getBoundingClientRect() }))
        .filter((t) => !Number.isNaN(t.v));
      if (nums.length < 2) {
        problems.push(`${chart}: the value axis has ${nums.length} tick(s) with a figure`);
        return;
      }
      const lowest = nums.reduce((a, b) => (b.r.top > a.r.top ? b : a));
      if (lowest.v !== 0) {
        problems.push(`${chart}: the value axis starts at ${lowest.v}, not 0`);
        return;
      }
      const zeroY = (lowest.r.top + lowest.r.bottom) / 2;
      const own = g === svg ? bars : bars.filter((b) => g.contains(b.el));
      // Mermaid draws a bar from the plot's bottom edge, and its value axis keeps half a tick
      // label of padding there (mermaid 12.4.0 src/diagrams/xychart/chartBuilder/components:
      // plot/barPlot.ts height = bottom - y; axis/baseAxis.ts outerPadding = label height / 2):
      // a bar stands at most a tick label's height below the 0.
      const slack = g === svg ? lowest.r.bottom - lowest.r.top : 1;
      for (const b of own)
        if (Math.abs(b.r.bottom - zeroY) > slack)
          problems.push(`${chart}: a bar stands at y=${b.r.bottom.toFixed(1)}, not on the axis' 0 at y=${zeroY.toFixed(1)}`);
    });
    // Each bar: a figure in its column (above or below it), and the arm's colour.
    for (const b of bars) {
      const column = texts.filter((t) => {
        const c = (t.r.left + t.r.right) / 2;
        return c >= b.r.left - 1 && c <= b.r.right + 1;
      });
      if (!column.some((t) => /\d/.test(t.text)))
        problems.push(`${where}: a bar carries no figure`);
      const label = b.el.getAttribute('data-label') ??
        column.map((t) => t.text).find((s) => Object.keys(COLORS).some((a) => s.startsWith(a)));
      const arm = label && Object.keys(COLORS).find((a) => label.startsWith(a));
      if (arm) {
        const fill = hex(b.el.getAttribute('fill') || getComputedStyle(b.el).fill);
        if (fill !== COLORS[arm]) problems.push(`${where}: the ${arm} bar is ${fill}, not ${COLORS[arm]}`);
      }
    }
  });
  // The picture: as wide as its widest chart.
  const all = document.querySelector('#charts').getBoundingClientRect();
  const right = Math.max(...svgs.map((svg) => svg.getBoundingClientRect().right), 1);
  return { charts: svgs.length, problems, width: Math.ceil(right + 8), height: Math.ceil(all.bottom) };
}

function page(file, body, script) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: #ffffff; font-family: sans-serif; }
#charts { width: 900px; padding: 8px; }
.chart-root { margin: 0 0 12px 0; }
.chart-root > svg { display: block; }
</style></head><body><div id="charts">${body}</div>${script}<script>
${pageChecks.toString()}
</script></body></html>`;
}

function mermaidBlocks(text) {
  const blocks = [];
  const re = /^```mermaid\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = re.exec(text)) !== null) blocks.push(m[1]);
  return blocks;
}

// The pages: Mermaid drawn in the page (mermaid.render of each block; mermaid.js.org/config/usage.html,
// "Using mermaid.render"), an SVG file inlined so that its elements are in the DOM.
const pages = files.map((file, i) => {
  const text = readFileSync(file, 'utf8');
  const name = basename(file).replace(/\.(\w+)$/, '-$1') + (files.filter((f) => basename(f) === basename(file)).length > 1 ? `-${i + 1}` : '');
  let html;
  if (/\.svg$/i.test(file)) {
    html = page(file, `<div class="chart-root">${text.replace(/^<\?xml[^>]*>\s*/, '').replace(/<!DOCTYPE[^>]*>/i, '')}</div>`,
      // An SVG with a viewBox and no size (gnuplot's) is drawn at its viewBox's size, as a browser
      // showing the file alone draws it.
      `<script>window.lmReady = (async () => {
  const svg = document.querySelector('.chart-root > svg');
  const vb = svg.viewBox.baseVal;
  if (!svg.getAttribute('width') && vb && vb.width > 0) {
    svg.setAttribute('width', vb.width);
    svg.setAttribute('height', vb.height);
  }
})();</script>`);
  } else {
    const blocks = mermaidBlocks(text);
    html = page(file, '', `<script src="${pathToFileURL(mermaidJs)}"></script><script>
window.lmReady = (async () => {
  mermaid.initialize({ startOnLoad: false });
  const blocks = ${JSON.stringify(blocks)};
  for (let i = 0; i < blocks.length; i++) {
    const { svg } = await mermaid.render('lm-chart-' + i, blocks[i]);
    const div = document.createElement('div');
    div.className = 'chart-root';
    div.innerHTML = svg;
    document.querySelector('#charts').appendChild(div);
  }
  if (blocks.length === 0) throw new Error('no mermaid block');
})();
</script>`);
  }
  const path = join(work, `page-${i}.html`);
  writeFileSync(path, html);
  return { file, name, url: pathToFileURL(path).href };
});

// The browser. --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start; the
// pages are our own files. --disable-dev-shm-usage: shared memory in /tmp, not /dev/shm (a chroot,
// as .ci/debian13's, may have no tmpfs there). --user-data-dir: a profile of its own, removed at
// the end. (Switches: chromium's content/public/common/content_switches.cc.)
const browser = spawn(chromium, ['--headless', '--remote-debugging-pipe', '--no-sandbox', '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run', '--no-default-browser-check', '--hide-scrollbars', '--allow-file-access-from-files',
  `--user-data-dir=${join(work, 'profile')}`, 'about:blank'],
{ stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let stderr = '';
browser.stderr.on('data', (d) => { stderr += d; });
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextId = 1;
const waiting = new Map();
const events = [];
let eventWaiter = null;
let pending = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  let end;
  while ((end = pending.indexOf(0)) >= 0) {
    const msg = JSON.parse(pending.subarray(0, end).toString('utf8'));
    pending = pending.subarray(end + 1);
    if (msg.id !== undefined && waiting.has(msg.id)) {
      const { ok, fail } = waiting.get(msg.id);
      waiting.delete(msg.id);
      if (msg.error) fail(new Error(`${msg.error.message} (${msg.error.code})`));
      else ok(msg.result);
    } else if (msg.method) {
      events.push(msg);
      if (eventWaiter) eventWaiter();
    }
  }
});
const exited = new Promise((ok) => browser.on('exit', (code, sig) => ok(code ?? sig)));
const gone = exited.then((how) => {
  throw new Error(`chromium ended (${how}) before the rendering did: ${stderr.trim().split('\n').slice(-3).join(' / ')}`);
});
gone.catch(() => {});
browser.on('error', (e) => { console.error(`render: cannot start ${chromium}: ${e.message}`); process.exit(2); });

function send(method, params = {}, sessionId) {
  const id = nextId++;
  const msg = { id, method, params };
  if (sessionId) msg.sessionId = sessionId;
  toBrowser.write(JSON.stringify(msg) + '\0');
  return Promise.race([gone, new Promise((ok, fail) => waiting.set(id, { ok, fail }))]);
}

async function event(method, sessionId) {
  for (;;) {
    const i = events.findIndex((e) => e.method === method && e.sessionId === sessionId);
    if (i >= 0) return events.splice(i, 1)[0];
    await Promise.race([gone, new Promise((ok) => { eventWaiter = ok; })]);
    eventWaiter = null;
  }
}

let failed = 0;
try {
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Page.enable', {}, sessionId);
  await send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false },
    sessionId);
  for (const p of pages) {
    events.length = 0;
    await send('Page.navigate', { url: p.url }, sessionId);
    await event('Page.loadEventFired', sessionId);
    const { result, exceptionDetails } = await send('Runtime.evaluate', {
      expression: 'window.lmReady.then(() => pageChecks())', awaitPromise: true, returnByValue: true,
    }, sessionId);
    if (exceptionDetails) {
      console.log(`${p.file}: not rendered: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      failed++;
      continue;
    }
    const r = result.value;
    const shot = await send('Page.captureScreenshot', {
      format: 'png', captureBeyondViewport: true, clip: { x: 0, y: 0, width: r.width, height: r.height, scale: 1 },
    }, sessionId);
    const png = join(resolve(out), `${p.name}.png`);
    writeFileSync(png, Buffer.from(shot.data, 'base64'));
    for (const problem of r.problems) console.log(`${p.file} ${problem}`);
    console.log(`${p.file}: ${r.charts} chart(s), ${r.problems.length} problem(s), ${r.width}x${r.height} px: ${png}`);
    if (r.problems.length > 0 || r.charts === 0) failed++;
  }
  await send('Browser.close').catch(() => {});
  await exited; // its profile is removed below: not while it still writes there
} catch (e) {
  console.error(`render: ${e.message}`);
  browser.kill();
  await exited;
  rmSync(work, { recursive: true, force: true });
  process.exit(2);
}
rmSync(work, { recursive: true, force: true });
console.log(`${pages.length - failed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
