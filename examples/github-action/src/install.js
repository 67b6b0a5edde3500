// The `version` input: lume-metal VERSION installed from its release (docs/releasing.md) — the
// source tarball lume-metal-VERSION.tar.gz, refused unless its SHA-256 is the one the release's
// SHA256SUMS gives it, built with CMake (tests and benchmarks off, as the Homebrew formula builds
// it) and kept in the runner's tool cache (@actions/tool-cache): the next job on this runner finds
// it there and downloads nothing.
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as core from "@actions/core";
import * as exec from "@actions/exec";
import * as tc from "@actions/tool-cache";

const TOOL = "lume-metal";

// "sha256  name" lines (sha256sum's format, "*name" for binary mode): the hash given to `name`.
export function sumFor(sums, name) {
  for (const line of sums.split("\n")) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trim());
    if (m && m[2] === name) return m[1];
  }
  return null;
}

function sha256File(file) {
  return new Promise((resolve, reject) => {
    const h = crypto.createHash("sha256");
    fs.createReadStream(file).on("error", reject).on("data", (d) => h.update(d)).on("end", () => resolve(h.digest("hex")));
  });
}

// Returns the path of the installed program; throws, having installed nothing, when the tarball
// is not the one SHA256SUMS names.
export async function installRelease(version, baseUrl) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`version is '${version}': it is a release's MAJOR.MINOR.PATCH, e.g. 0.1.0 (docs/releasing.md)`);
  }
  const cached = tc.find(TOOL, version);
  if (cached) {
    core.info(`lume-metal ${version}: from the tool cache (${cached})`);
    return path.join(cached, "bin", TOOL);
  }
  const base = `${baseUrl.replace(/\/+$/, "")}/v${version}`;
  const name = `lume-metal-${version}.tar.gz`;
  core.info(`lume-metal ${version}: downloading ${base}/${name} and its SHA256SUMS`);
  const sums = fs.readFileSync(await tc.downloadTool(`${base}/SHA256SUMS`), "utf8");
  const want = sumFor(sums, name);
  if (!want) throw new Error(`${base}/SHA256SUMS names no ${name}: nothing installed`);
  const tarball = await tc.downloadTool(`${base}/${name}`);
  const got = await sha256File(tarball);
  if (got !== want) {
    fs.rmSync(tarball, { force: true });
    throw new Error(`${name} from ${base} has SHA-256 ${got}, but its SHA256SUMS says ${want}: refused, nothing installed`);
  }
  core.info(`lume-metal ${version}: ${name} verified (SHA-256 ${got}); building it`);
  const src = path.join(await tc.extractTar(tarball), `lume-metal-${version}`);
  const work = fs.mkdtempSync(path.join(process.env.RUNNER_TEMP || os.tmpdir(), "lume-metal-build-"));
  const prefix = path.join(work, "prefix");
  const cmake = (args) => exec.exec("cmake", args);
  await cmake(["-S", src, "-B", path.join(work, "build"), "-DCMAKE_BUILD_TYPE=Release", "-DLUME_METAL_TESTS=OFF",
    "-DLUME_METAL_BENCHMARKS=OFF", `-DCMAKE_INSTALL_PREFIX=${prefix}`]);
  await cmake(["--build", path.join(work, "build"), "--parallel", String(os.availableParallelism?.() ?? os.cpus().length)]);
  await cmake(["--install", path.join(work, "build")]);
  const dir = await tc.cacheDir(prefix, TOOL, version);
  fs.rmSync(work, { recursive: true, force: true });
  core.info(`lume-metal ${version}: installed in the tool cache (${dir})`);
  return path.join(dir, "bin", TOOL);
}

// The program the steps run: the `version` input's release (added to PATH for later steps), or
// the `lume-metal` input as it is.
export async function program() {
  const version = core.getInput("version");
  if (!version) return core.getInput("lume-metal") || TOOL;
  const bin = await installRelease(version, core.getInput("release-url"));
  core.addPath(path.dirname(bin));
  return bin;
}
