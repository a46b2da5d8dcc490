#!/usr/bin/env node
// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// node_redlock_runner.js: the workload of redlock-bench, run with node-redlock (npm `redlock`
// v5) over ioredis, printing the same progress lines and writing the same JSON fields, so that
// bench/compare can put the two side by side. Install its packages first:
//   (cd bench/peers && npm install --no-audit --no-fund --no-package-lock)
//
// usage: node node_redlock_runner.js --master URI [--master URI ...] [--workers W]
//          [--resources R] [--resource-prefix P] [--ttl MS] [--hold MS] [--retries K]
//          [--retry-delay MS] [--retry-jitter MS]
//          [--duration S] [--warmup S] [--json FILE] [--auto-pipelining]
//
// W workers each run acquire -> hold -> release in a loop; worker w locks resource w % R.
// Latencies go into a log-linear histogram (every sample counted, buckets at most 1/128 of
// their value wide: the layout of bench/histogram.hpp). Exit status: 0 ok, 1 counts do not add
// up, 2 bad arguments or masters unreachable.
"use strict";

const fs = require("fs");
const path = require("path");

function fail(msg) {
  process.stderr.write(`node_redlock_runner: ${msg}\n`);
  process.exit(2);
}

let Redis, Redlock, ExecutionError, ResourceLockedError;
try {
  Redis = require("ioredis");
  ({ default: Redlock, ExecutionError, ResourceLockedError } = require("redlock"));
} catch (e) {
  fail(`cannot load ioredis / redlock (${e.message}); run: cd ${__dirname} && npm install --no-audit --no-fund --no-package-lock`);
}

function packageVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, "node_modules", name, "package.json"), "utf8")).version;
  } catch (e) {
    return "?";
  }
}

// ---- options ------------------------------------------------------------------------------

function parseArgs(argv) {
  const c = {
    masters: [], workers: 128, resources: 0, prefix: "bench:", ttl: 10000, hold: 0,
    retries: 0, retryDelay: 125, retryJitter: 75, duration: 10, warmup: 1, json: "", autoPipelining: false,
  };
  const int = (opt, v, lo, hi) => {
    if (!/^\d+$/.test(v) || Number(v) < lo || Number(v) > hi) fail(`${opt} wants an integer in [${lo}, ${hi}], got '${v}'`);
    return Number(v);
  };
  const secs = (opt, v, lo) => {
    const x = Number(v);
    if (v === "" || !Number.isFinite(x) || x < lo) fail(`${opt} wants seconds (>= ${lo}), got '${v}'`);
    return x;
  };
  for (let i = 2; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--help" || a === "-h") {
      process.stdout.write(fs.readFileSync(__filename, "utf8").split("\n").slice(8, 16).map((l) => l.replace(/^\/\/ ?/, "")).join("\n") + "\n");
      process.exit(0);
    }
    if (a === "--auto-pipelining") { c.autoPipelining = true; continue; }
    if (i + 1 >= argv.length) fail(`unknown option or missing value: ${a}`);
    const v = argv[++i];
    switch (a) {
      case "--master": c.masters.push(v); break;
      case "--workers": c.workers = int(a, v, 1, 1000000); break;
      case "--resources": c.resources = int(a, v, 1, 100000000); break;
      case "--resource-prefix": c.prefix = v; break;
      case "--ttl": c.ttl = int(a, v, 1, 86400000); break;
      case "--hold": c.hold = int(a, v, 0, 86400000); break;
      case "--retries": c.retries = int(a, v, 0, 1000000); break;
      case "--retry-delay": c.retryDelay = int(a, v, 0, 86400000); break;
      case "--retry-jitter": c.retryJitter = int(a, v, 0, 86400000); break;
      case "--duration": c.duration = secs(a, v, 0.1); break;
      case "--warmup": c.warmup = secs(a, v, 0); break;
      case "--json": c.json = v; break;
      default: fail(`unknown option: ${a}`);
    }
  }
  if (c.masters.length === 0) fail("at least one --master URI is needed");
  if (!c.resources) c.resources = c.workers;
  return c;
}

// ---- histogram (same layout as bench/histogram.hpp; values in ns) ---------------------------

const SUB_BITS = 8, MAX_BITS = 36;
const SUB_COUNT = 2 ** SUB_BITS, HALF = SUB_COUNT / 2, MAX_VALUE = 2 ** MAX_BITS - 1;
const BUCKETS = SUB_COUNT + (MAX_BITS - SUB_BITS) * HALF;

function bucketIndex(v) {
  v = Math.min(Math.max(Math.floor(v), 0), MAX_VALUE);
  if (v < SUB_COUNT) return v;
  let msb = Math.floor(Math.log2(v));
  if (2 ** msb > v) --msb;
  if (2 ** (msb + 1) <= v) ++msb;
  const shift = msb - (SUB_BITS - 1);
  return SUB_COUNT + (shift - 1) * HALF + (Math.floor(v / 2 ** shift) - HALF);
}

function bucketHighest(i) {
  if (i < SUB_COUNT) return i;
  const j = i - SUB_COUNT;
  const shift = Math.floor(j / HALF) + 1;
  const lower = (HALF + (j % HALF)) * 2 ** shift;
  return lower + 2 ** shift - 1;
}

class Histogram {
  constructor() {
    this.counts = new Float64Array(BUCKETS);
    this.total = 0; this.sum = 0; this.max = 0; this.min = Infinity;
  }
  add(ns) {
    const v = Math.min(Math.max(ns, 0), MAX_VALUE);
    this.counts[bucketIndex(v)] += 1;
    this.total += 1; this.sum += v;
    if (v > this.max) this.max = v;
    if (v < this.min) this.min = v;
  }
  // p in [0, 100], microseconds: highest value equivalent to the sample of rank ceil(p/100 n).
  percentileUs(p) {
    if (this.total === 0) return 0;
    if (p >= 100) return this.max / 1000;
    const rank = Math.min(Math.max(Math.ceil((p / 100) * this.total - 1e-9), 1), this.total);
    let seen = 0;
    for (let i = 0; i < BUCKETS; ++i) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(bucketHighest(i), this.max) / 1000;
    }
    return this.max / 1000;
  }
  summary() {
    const r = (x) => Number(x.toPrecision(6));
    return {
      count: this.total, min: this.total ? r(this.min / 1000) : 0, mean: this.total ? r(this.sum / this.total / 1000) : 0,
      p50: r(this.percentileUs(50)), p90: r(this.percentileUs(90)), p99: r(this.percentileUs(99)),
      p999: r(this.percentileUs(99.9)), max: r(this.percentileUs(100)),
    };
  }
  spectrum() {
    const out = [];
    for (let k = 0; k <= 50; ++k) {
      const p = 100 * (1 - 10 ** (-k / 10));
      out.push([Number(p.toPrecision(6)), Number(this.percentileUs(p).toPrecision(6))]);
    }
    return out;
  }
}

// ---- the run ------------------------------------------------------------------------------

const WARMING = 0, MEASURING = 1, STOPPING = 2;
const now = () => process.hrtime.bigint();
const elapsedNs = (a, b) => Number(b - a);

// The error of an ExecutionError's last attempt, by kind. node-redlock rejects an attempt once a
// majority voted against; a vote against is ResourceLockedError when the key held another value.
async function classify(err, lockedKind) {
  if (!(err instanceof ExecutionError) || !err.attempts || err.attempts.length === 0) return "other";
  const stats = await err.attempts[err.attempts.length - 1];
  let locked = 0, failedOther = 0, timedOut = 0;
  for (const e of stats.votesAgainst.values()) {
    if (e instanceof ResourceLockedError) ++locked;
    else if (/timeout|timed out/i.test(e.message)) ++timedOut;
    else ++failedOther;
  }
  if (locked > 0 && locked >= failedOther + timedOut) return lockedKind;
  if (timedOut > 0 && timedOut >= failedOther) return "timeout";
  return "no_quorum";
}

async function main() {
  const cfg = parseArgs(process.argv);
  const clients = cfg.masters.map((uri) => new Redis(uri, {
    enableAutoPipelining: cfg.autoPipelining,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  }));
  try {
    await Promise.all(clients.map((c) => c.connect()));
  } catch (e) {
    fail(`cannot connect to the masters: ${e.message}`);
  }
  // Retry timing matching redlock-bench's defaults unless told (50 ms + uniform [0, 150] ms:
  // node-redlock's delay is retryDelay + uniform [-retryJitter, retryJitter]).
  const redlock = new Redlock(clients, {
    driftFactor: 0.01, retryCount: cfg.retries, retryDelay: cfg.retryDelay, retryJitter: cfg.retryJitter,
  });
  redlock.on("error", () => {});

  const s = {
    attempts: 0, acquired: 0, released: 0,
    failed: { contended: 0, no_quorum: 0, timeout: 0, other: 0 },
    release_failed: { lock_lost: 0, no_quorum: 0, timeout: 0, other: 0 },
    other_errors: {},
    acquire: new Histogram(), release: new Histogram(), failedAttempt: new Histogram(),
    allCycles: 0, allFailed: 0, interval: new Histogram(),
  };
  let phase = cfg.warmup > 0 ? WARMING : MEASURING;
  const noteOther = (what, e) => {
    const k = `${what}: ${e && e.message ? e.message : String(e)}`;
    s.other_errors[k] = (s.other_errors[k] || 0) + 1;
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  async function worker(w) {
    const resource = cfg.prefix + String(w % cfg.resources);
    while (phase !== STOPPING) {
      const measured = phase === MEASURING;
      const t0 = now();
      let lock;
      try {
        lock = await redlock.acquire([resource], cfg.ttl);
      } catch (e) {
        const t1 = now();
        s.allFailed++;
        if (measured) {
          s.attempts++;
          const k = await classify(e, "contended");
          s.failed[k]++;
          s.failedAttempt.add(elapsedNs(t0, t1));
          if (k === "other") noteOther("acquire", e);
        }
        continue;
      }
      const t1 = now();
      s.interval.add(elapsedNs(t0, t1));
      if (measured) {
        s.attempts++; s.acquired++;
        s.acquire.add(elapsedNs(t0, t1));
      }
      if (cfg.hold > 0) await sleep(cfg.hold);
      const t2 = now();
      let relErr = null;
      try {
        await redlock.release(lock);
      } catch (e) {
        relErr = e;
      }
      const t3 = now();
      s.allCycles++;
      if (measured) {
        s.release.add(elapsedNs(t2, t3));
        if (relErr) {
          const k = await classify(relErr, "lock_lost");
          s.release_failed[k]++;
          if (k === "other") noteOther("release", relErr);
        } else {
          s.released++;
        }
      }
    }
  }

  process.stdout.write(`node-redlock runner: ${cfg.masters.length} masters, ${cfg.workers} workers on ${cfg.resources} resources, ttl ${cfg.ttl} ms, hold ${cfg.hold} ms, retries ${cfg.retries}${cfg.autoPipelining ? ", auto-pipelining" : ""}\n`);
  let interrupted = false;
  process.on("SIGINT", () => { interrupted = true; });
  process.on("SIGTERM", () => { interrupted = true; });

  const tStart = now();
  let m0 = tStart, cpu0 = process.cpuUsage();
  const workers = [];
  for (let w = 0; w < cfg.workers; ++w) workers.push(worker(w));

  // Time keeping: phase switches and a progress line every second.
  let prevCycles = 0, prevT = tStart, ticks = 0;
  await new Promise((resolve) => {
    const check = () => {
      const t = now();
      const secs = elapsedNs(tStart, t) / 1e9;
      if (phase === WARMING && secs >= cfg.warmup) {
        m0 = now(); cpu0 = process.cpuUsage(); phase = MEASURING;
      }
      if (interrupted || secs >= cfg.warmup + cfg.duration) return resolve();
      if (secs >= ticks + 1) {
        ++ticks;
        const dt = elapsedNs(prevT, t) / 1e9;
        const cps = (s.allCycles - prevCycles) / dt;
        process.stdout.write(`${secs.toFixed(1).padStart(7)} s  ${(phase === MEASURING ? "run" : "warm-up").padEnd(7)} ${Math.round(cps).toLocaleString("en-US").padStart(12)} cycles/s   acquire p50 ${s.interval.percentileUs(50).toFixed(1).padStart(9)} us  p99 ${s.interval.percentileUs(99).toFixed(1).padStart(9)} us   failed ${s.allFailed}\n`);
        s.interval = new Histogram();
        prevCycles = s.allCycles; prevT = t;
      }
      setTimeout(check, 20);
    };
    setTimeout(check, 20);
  });
  phase = STOPPING;
  await Promise.all(workers);  // each finishes the cycle it is in; those cycles count
  const m1 = now();
  const cpu = process.cpuUsage(cpu0);
  const cpuUs = cpu.user + cpu.system;
  const elapsed = elapsedNs(m0, m1) / 1e9;
  await Promise.all(clients.map((c) => c.quit().catch(() => {})));

  const failedSum = Object.values(s.failed).reduce((a, b) => a + b, 0);
  const relFailedSum = Object.values(s.release_failed).reduce((a, b) => a + b, 0);
  const countsOk = s.attempts === s.acquired + failedSum && s.acquired === s.released + relFailedSum &&
    s.acquire.total === s.acquired && s.release.total === s.acquired;
  const r6 = (x) => Number(x.toPrecision(6));
  const out = {
    tool: "node_redlock_runner",
    implementation: `node-redlock ${packageVersion("redlock")} + ioredis ${packageVersion("ioredis")}, node ${process.version}`,
    config: {
      masters: cfg.masters.map((u) => u.replace(/\/\/[^@/]*@/, "//***@")), spawned: 0,
      workers: cfg.workers, resources: cfg.resources, resource_prefix: cfg.prefix, ttl_ms: cfg.ttl, hold_ms: cfg.hold,
      duration_s: cfg.duration, warmup_s: cfg.warmup, retries: cfg.retries, threads: 1, auto_pipelining: cfg.autoPipelining,
    },
    elapsed_s: r6(elapsed),
    interrupted,
    cycles: s.acquired,
    cycles_per_s: r6(elapsed > 0 ? s.acquired / elapsed : 0),
    attempts_per_s: r6(elapsed > 0 ? s.attempts / elapsed : 0),
    attempts: s.attempts,
    acquired: s.acquired,
    failed: s.failed,
    released: s.released,
    release_failed: s.release_failed,
    other_errors: s.other_errors,
    counts_add_up: countsOk,
    acquire_us: s.acquire.summary(),
    release_us: s.release.summary(),
    failed_attempt_us: s.failedAttempt.summary(),
    client_cpu_us: cpuUs,
    client_cpu_us_per_cycle: r6(s.acquired ? cpuUs / s.acquired : 0),
    client_cpu_us_per_attempt: r6(s.attempts ? cpuUs / s.attempts : 0),
    peak_rss_kib: process.resourceUsage().maxRSS,
    acquire_spectrum: s.acquire.spectrum(),
    release_spectrum: s.release.spectrum(),
  };

  const f = (x) => Math.round(x).toLocaleString("en-US");
  const row = (name, h) => {
    const v = h.summary();
    return `  ${name.padEnd(16)} ${[v.p50, v.p90, v.p99, v.p999, v.max, v.mean].map((x) => x.toFixed(1).padStart(10)).join(" ")} ${f(v.count).padStart(12)}\n`;
  };
  process.stdout.write(`\nnode-redlock: measured ${elapsed.toFixed(2)} s after ${cfg.warmup} s of warm-up${interrupted ? " (interrupted)" : ""}\n\n` +
    `  cycles/s               ${f(out.cycles_per_s).padStart(14)}\n` +
    `  attempts               ${f(s.attempts).padStart(14)}   acquired ${f(s.acquired)}, failed ${f(failedSum)} (contended ${s.failed.contended}, no_quorum ${s.failed.no_quorum}, timeout ${s.failed.timeout}, other ${s.failed.other})\n` +
    `  released               ${f(s.released).padStart(14)}   release failed ${f(relFailedSum)}\n` +
    `  client CPU per cycle   ${out.client_cpu_us_per_cycle.toFixed(1).padStart(11)} us\n` +
    `  peak RSS               ${f(out.peak_rss_kib).padStart(10)} KiB\n\n` +
    `  ${"latency (us)".padEnd(16)} ${["p50", "p90", "p99", "p99.9", "max", "mean"].map((x) => x.padStart(10)).join(" ")} ${"samples".padStart(12)}\n` +
    row("acquire", s.acquire) + row("release", s.release) + (s.failedAttempt.total ? row("failed attempt", s.failedAttempt) : ""));
  for (const [m, n] of Object.entries(s.other_errors)) process.stdout.write(`  other error: ${m} (${n})\n`);
  if (!countsOk) process.stdout.write(`\n  COUNTS DO NOT ADD UP: attempts ${s.attempts}, acquired ${s.acquired} + failed ${failedSum}\n`);
  if (cfg.json) {
    fs.writeFileSync(cfg.json, JSON.stringify(out, null, 2) + "\n");
    process.stdout.write(`\n  results: ${path.resolve(cfg.json)}\n`);
  }
  process.exitCode = countsOk ? (interrupted ? 130 : 0) : 1;
}

main().catch((e) => {
  process.stderr.write(`node_redlock_runner: ${e.stack || e}\n`);
  process.exit(1);
});
