// Bundles the action: src/main.js and src/post.js with the Actions toolkit they import, one file
// each, into dist/ (committed: the runner runs the action from its checkout and installs nothing).
//   node build.mjs           write dist/
//   node build.mjs --check   exit 1, naming the file, when dist/ is not what a fresh bundle gives
// The bundle is CommonJS for node 20 and later (`using: node24` on the runner; node 20 runs it
// here for the tests), without source maps or anything that depends on this checkout's path.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes("--check");
const entries = ["main", "post"];

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: Object.fromEntries(entries.map((e) => [e, `src/${e}.js`])),
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  charset: "utf8",
  legalComments: "eof",
  logLevel: "warning",
  write: false,
});
let stale = 0;
for (const f of result.outputFiles) {
  const rel = path.relative(here, f.path);
  if (check) {
    const have = fs.existsSync(f.path) ? fs.readFileSync(f.path) : null;
    if (have === null || Buffer.compare(have, Buffer.from(f.contents)) !== 0) {
      console.error(`${rel} is not what the sources bundle to: run npm ci && npm run build in examples/github-action and commit dist/`);
      stale++;
    }
  } else {
    fs.mkdirSync(path.dirname(f.path), { recursive: true });
    fs.writeFileSync(f.path, f.contents);
    console.log(`${rel}: ${f.contents.length} bytes`);
  }
}
if (check) console.log(`dist/: ${result.outputFiles.length - stale} of ${result.outputFiles.length} up to date`);
process.exit(stale === 0 ? 0 : 1);
