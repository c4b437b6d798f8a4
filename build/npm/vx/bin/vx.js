#!/usr/bin/env node
// The `vx` command of the npm package: find this platform's binary (bin/vx inside the
// platform package, beside the libraries it loads) and run it as if it were vx itself. Its
// stdio is vx's; SIGINT, SIGTERM and SIGHUP sent to this launcher reach it; its exit code (or
// the signal that ended it) becomes the launcher's.
"use strict";

const { spawn } = require("child_process");
const path = require("path");
const fs = require("fs");

const NAME = "vx-runner";

// The running glibc's version ("2.36"), or "" off Linux and on musl.
function glibcVersion() {
  if (process.platform !== "linux") return "";
  const report = process.report && process.report.getReport ? process.report.getReport() : null;
  return (report && report.header && report.header.glibcVersionRuntime) || "";
}

function libc() {
  if (process.platform !== "linux") return "";
  return glibcVersion() ? "" : "-musl";
}

function older(have, need) {
  const a = have.split(".").map(Number);
  const b = need.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) < (b[i] || 0);
  }
  return false;
}

// npm's `libc` field cannot tell an old glibc from a new one: the platform package records
// the glibc its binary was built for, and an older one would fail to load it with a linker
// error naming a symbol, so it is refused here, saying what runs instead.
function checkGlibc(name) {
  const have = glibcVersion();
  let need = "";
  try {
    need = (require(`${name}/package.json`).vx || {}).glibc || "";
  } catch (err) {
    return;
  }
  if (have && need && older(have, need)) {
    fail(
      `the vx binary in ${name} needs glibc ${need} or newer, and this system has ${have} — ` +
        `install vx with pip instead: python3 -m pip install vx-runner (Python 3.11 or newer)`,
    );
  }
}

function platformPackage() {
  return `${NAME}-${process.platform}-${process.arch}${libc()}`;
}

function findBinary() {
  const override = process.env.VX_BINARY_PATH;
  if (override) {
    if (!fs.existsSync(override)) {
      fail(`VX_BINARY_PATH names ${override}, which does not exist — unset it or point it at a vx binary`);
    }
    return override;
  }
  const name = platformPackage();
  let binary = "";
  try {
    binary = require.resolve(`${name}/bin/vx`);
  } catch (err) {
    fail(
      `no vx binary for ${process.platform}-${process.arch}: the package ${name} is not installed ` +
        `(optional dependencies skipped?) — reinstall with them: npm install -g ${NAME} ` +
        `(without --omit=optional), or set VX_BINARY_PATH to a vx binary`,
    );
  }
  checkGlibc(name);
  return binary;
}

function fail(message) {
  process.stderr.write(`vx: ${message}\n`);
  process.exit(1);
}

function main() {
  const binary = findBinary();
  let child = null;
  // Listening before the spawn: a signal that arrives while the child starts is forwarded too.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child = spawn(binary, process.argv.slice(2), {
    stdio: "inherit",
    env: { ...process.env, VX_INSTALLED_BY: "npm" },
  });
  child.on("error", (err) => fail(`could not start ${binary} (${err.code || err.message})`));
  child.on("exit", (code, signal) => {
    if (signal) {
      // End the same way, so a shell sees the signal (130 for SIGINT), not a plain exit.
      for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.removeAllListeners(s);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

main();
