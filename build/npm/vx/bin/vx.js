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

function libc() {
  if (process.platform !== "linux") return "";
  const report = process.report && process.report.getReport ? process.report.getReport() : null;
  const glibc = report && report.header && report.header.glibcVersionRuntime;
  return glibc ? "" : "-musl";
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
  try {
    return require.resolve(`${name}/bin/vx`);
  } catch (err) {
    fail(
      `no vx binary for ${process.platform}-${process.arch}: the package ${name} is not installed ` +
        `(optional dependencies skipped?) — reinstall with them: npm install -g ${NAME} ` +
        `(without --omit=optional), or set VX_BINARY_PATH to a vx binary`,
    );
  }
  return "";
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
