#!/usr/bin/env node
// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// compare_report.js DIR: the report of bench/compare. Reads DIR/runs.tsv (scenario, side, round,
// masters, JSON file per run), prints the table of medians with ratios and the targets, and
// writes DIR/summary.md, DIR/summary.json and the plots (gnuplot, PNG) into DIR.
// Medians are taken per side over the rounds; a ratio is the ratio of two medians.
"use strict";

const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");

const dir = process.argv[2];
if (!dir) {
  console.error("usage: compare_report.js RESULTS_DIR");
  process.exit(2);
}

const runs = fs.readFileSync(path.join(dir, "runs.tsv"), "utf8").split("\n").filter(Boolean).map((l) => {
  const [scenario, side, round, masters, file] = l.split("\t");
  return { scenario, side, round: Number(round), masters: Number(masters), file, r: JSON.parse(fs.readFileSync(file, "utf8")) };
});

const median = (xs) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pick = (f) => runs.filter(f);
const med = (rs, get) => median(rs.map((x) => get(x.r)));
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }) : "-");
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);
const rounds = Math.max(0, ...runs.map((x) => x.round));

// The run whose value is the median (for the plots): the middle one by `get`.
const medianRun = (rs, get) => [...rs].sort((a, b) => get(a.r) - get(b.r))[Math.floor((rs.length - 1) / 2)];

const rows = [];   // [scenario, metric, redlock, node, reference, ratios, target, verdict]
const summary = { rounds, scenarios: {} };
const verdict = (ok) => (ok === undefined ? "" : ok ? "met" : "MISSED");

// ---- (a) 128 workers, no contention ----------------------------------------------------------
const aO = pick((x) => x.scenario === "a" && x.side === "redlock");
const aN = pick((x) => x.scenario === "a" && x.side === "node-redlock");
const aC = pick((x) => x.scenario === "a" && x.side === "ceiling");
const aP = pick((x) => x.scenario === "a" && x.side === "pair-ceiling");
if (aO.length) {
  const o = med(aO, (r) => r.cycles_per_s), n = med(aN, (r) => r.cycles_per_s), c = med(aC, (r) => r.ceiling_cycles_per_s);
  const oc = med(aO, (r) => r.client_cpu_us_per_cycle), nc = med(aN, (r) => r.client_cpu_us_per_cycle);
  const s = summary.scenarios.a = {
    redlock_cycles_per_s: o, node_cycles_per_s: n, ceiling_cycles_per_s: c,
    ours_over_node: ratio(o, n), ours_over_ceiling: ratio(o, c),
    redlock_cpu_us_per_cycle: oc, node_cpu_us_per_cycle: nc,
    redlock_acquire_p50_us: med(aO, (r) => r.acquire_us.p50), node_acquire_p50_us: med(aN, (r) => r.acquire_us.p50),
    redlock_acquire_p99_us: med(aO, (r) => r.acquire_us.p99), node_acquire_p99_us: med(aN, (r) => r.acquire_us.p99),
    redlock_release_p50_us: med(aO, (r) => r.release_us.p50), node_release_p50_us: med(aN, (r) => r.release_us.p50),
    redlock_peak_rss_kib: med(aO, (r) => r.peak_rss_kib), node_peak_rss_kib: med(aN, (r) => r.peak_rss_kib),
    redlock_failed: med(aO, (r) => Object.values(r.failed).reduce((p, q) => p + q, 0)),
    redlock_server_cpu_us_per_cycle: med(aO, (r) => (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    node_server_cpu_us_per_cycle: med(aN, (r) => (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    ceiling_server_cpu_us_per_cycle: med(aC, (r) => (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    ceiling_release_deleted_fraction: med(aC, (r) => r.release_deleted_fraction),
    // Whole CPU cost of a cycle on this machine: client (or load generator) + all masters.
    redlock_total_cpu_us_per_cycle: med(aO, (r) => r.client_cpu_us_per_cycle + (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    node_total_cpu_us_per_cycle: med(aN, (r) => r.client_cpu_us_per_cycle + (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    ceiling_total_cpu_us_per_cycle: med(aC, (r) => r.load_generator_cpu_us_per_cycle + (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
  };
  s.ours_over_ceiling_per_cpu = ratio(s.ceiling_total_cpu_us_per_cycle, s.redlock_total_cpu_us_per_cycle);
  rows.push(["(a) 128 workers, 128 resources", "cycles/s", fmt(o), fmt(n), `${fmt(c)} (ceiling)`,
    `${fmt(s.ours_over_node, 2)}x node, ${fmt(100 * s.ours_over_ceiling, 0)}% of ceiling`, ">= 6x node, >= 70% ceiling",
    verdict(aN.length && aC.length ? s.ours_over_node >= 6 && s.ours_over_ceiling >= 0.7 : undefined)]);
  if (aP.length) {
    // The like-for-like ceiling: the exact work of a lock cycle (issue 10's target: >= 90%).
    s.pair_ceiling_cycles_per_s = med(aP, (r) => r.cycles_per_s);
    s.ours_over_pair_ceiling = ratio(o, s.pair_ceiling_cycles_per_s);
    rows.push(["", "cycles/s vs the like-for-like ceiling", fmt(o), "", `${fmt(s.pair_ceiling_cycles_per_s)} (pairs)`,
      `${fmt(100 * s.ours_over_pair_ceiling, 0)}% of it`, ">= 90%", verdict(s.ours_over_pair_ceiling >= 0.9)]);
    s.pair_ceiling_client_cpu_us_per_cycle = med(aP, (r) => r.client_cpu_us_per_cycle);
    s.pair_ceiling_server_cpu_us_per_cycle = med(aP, (r) => (r.servers ? r.servers.cpu_us_per_cycle : NaN));
    rows.push(["", "CPU per cycle, client / servers (us)", `${fmt(oc, 2)} / ${fmt(s.redlock_server_cpu_us_per_cycle, 1)}`, "",
      `${fmt(s.pair_ceiling_client_cpu_us_per_cycle, 2)} / ${fmt(s.pair_ceiling_server_cpu_us_per_cycle, 1)} (pairs)`, "", "", ""]);
  }
  rows.push(["", "client CPU per cycle (us)", fmt(oc, 1), fmt(nc, 1), "", `${fmt(ratio(nc, oc), 1)}x less than node`, "<= 10 us", verdict(oc <= 10)]);
  rows.push(["", "servers' CPU per cycle (us, all masters)", fmt(s.redlock_server_cpu_us_per_cycle, 1), fmt(s.node_server_cpu_us_per_cycle, 1),
    `${fmt(s.ceiling_server_cpu_us_per_cycle, 1)} (ceiling; ${fmt(100 * s.ceiling_release_deleted_fraction)}% of its releases delete)`, "", "", ""]);
  rows.push(["", "CPU per cycle, client + servers (us)", fmt(s.redlock_total_cpu_us_per_cycle, 1), fmt(s.node_total_cpu_us_per_cycle, 1),
    `${fmt(s.ceiling_total_cpu_us_per_cycle, 1)} (ceiling: redis-benchmark + servers)`,
    `cycles per CPU-second: ${fmt(100 * s.ours_over_ceiling_per_cpu)}% of ceiling's`, "", ""]);
  rows.push(["", "acquire p50 / p99 (us)", `${fmt(s.redlock_acquire_p50_us)} / ${fmt(s.redlock_acquire_p99_us)}`,
    `${fmt(s.node_acquire_p50_us)} / ${fmt(s.node_acquire_p99_us)}`, "", "", "", ""]);
  rows.push(["", "release p50 (us)", fmt(s.redlock_release_p50_us), fmt(s.node_release_p50_us), "", "", "", ""]);
  rows.push(["", "peak RSS (KiB)", fmt(s.redlock_peak_rss_kib), fmt(s.node_peak_rss_kib), "", "", "", ""]);
}

// ---- (b) 1 worker: latency -------------------------------------------------------------------
const bO = pick((x) => x.scenario === "b" && x.side === "redlock");
const bN = pick((x) => x.scenario === "b" && x.side === "node-redlock");
const bS = pick((x) => x.scenario === "b" && x.side === "set-rtt");
const b1 = pick((x) => x.scenario === "b1" && x.side === "redlock");
if (bO.length) {
  const o = med(bO, (r) => r.acquire_us.p50), n = med(bN, (r) => r.acquire_us.p50);
  const rtt = med(bS, (r) => r.set_p50_us), rttMean = med(bS, (r) => r.set_rtt_us);
  const s = summary.scenarios.b = {
    redlock_acquire_p50_us: o, node_acquire_p50_us: n, set_rtt_p50_us: rtt, set_rtt_from_rps_us: rttMean,
    ours_over_rtt: ratio(o, rtt), ours_over_node: ratio(o, n),
    redlock_acquire_p99_us: med(bO, (r) => r.acquire_us.p99), node_acquire_p99_us: med(bN, (r) => r.acquire_us.p99),
    redlock_release_p50_us: med(bO, (r) => r.release_us.p50), node_release_p50_us: med(bN, (r) => r.release_us.p50),
    redlock_cycles_per_s: med(bO, (r) => r.cycles_per_s), node_cycles_per_s: med(bN, (r) => r.cycles_per_s),
    redlock_one_master_acquire_p50_us: med(b1, (r) => r.acquire_us.p50),
  };
  rows.push(["(b) 1 worker", "acquire p50 (us)", fmt(o, 1), fmt(n, 1), `${fmt(rtt, 1)} (SET RTT p50)`,
    `${fmt(s.ours_over_rtt, 2)}x RTT, ${fmt(s.ours_over_node, 2)}x node`, "<= 1.5x RTT, < node",
    verdict(bS.length && bN.length ? s.ours_over_rtt <= 1.5 && o < n : undefined)]);
  rows.push(["", "acquire p99 (us)", fmt(s.redlock_acquire_p99_us, 1), fmt(s.node_acquire_p99_us, 1), "", "", "", ""]);
  if (b1.length)
    rows.push(["", "acquire p50 (us), 1 master only", fmt(s.redlock_one_master_acquire_p50_us, 1), "", "", `${fmt(ratio(s.redlock_one_master_acquire_p50_us, rtt), 2)}x RTT`, "", ""]);
  rows.push(["", "release p50 (us)", fmt(s.redlock_release_p50_us, 1), fmt(s.node_release_p50_us, 1), "", "", "", ""]);
  rows.push(["", "cycles/s", fmt(s.redlock_cycles_per_s), fmt(s.node_cycles_per_s), `${fmt(rttMean, 1)} us (SET 1/rps)`, "", "", ""]);
}

// ---- (c) contention --------------------------------------------------------------------------
const cO = pick((x) => x.scenario === "c" && x.side === "redlock");
const cN = pick((x) => x.scenario === "c" && x.side === "node-redlock");
if (cO.length) {
  const o = med(cO, (r) => r.cycles_per_s), n = med(cN, (r) => r.cycles_per_s);
  const s = summary.scenarios.c = {
    redlock_cycles_per_s: o, node_cycles_per_s: n, ours_over_node: ratio(o, n),
    redlock_attempts_per_s: med(cO, (r) => r.attempts_per_s), node_attempts_per_s: med(cN, (r) => r.attempts_per_s),
    redlock_cpu_us_per_cycle: med(cO, (r) => r.client_cpu_us_per_cycle), node_cpu_us_per_cycle: med(cN, (r) => r.client_cpu_us_per_cycle),
    redlock_acquire_p50_us: med(cO, (r) => r.acquire_us.p50), node_acquire_p50_us: med(cN, (r) => r.acquire_us.p50),
  };
  rows.push(["(c) 64 workers, 8 resources, no retry", "successful cycles/s", fmt(o), fmt(n), "", `${fmt(s.ours_over_node, 2)}x node`,
    ">= 3x node", verdict(cN.length ? s.ours_over_node >= 3 : undefined)]);
  rows.push(["", "attempts/s", fmt(s.redlock_attempts_per_s), fmt(s.node_attempts_per_s), "", "", "", ""]);
  rows.push(["", "client CPU per cycle (us)", fmt(s.redlock_cpu_us_per_cycle, 1), fmt(s.node_cpu_us_per_cycle, 1), "", "", "", ""]);
  rows.push(["", "acquire p50 (us)", fmt(s.redlock_acquire_p50_us), fmt(s.node_acquire_p50_us), "", "", "", ""]);
}

// ---- (e) contention, waiting ------------------------------------------------------------------
const eO = pick((x) => x.scenario === "e" && x.side === "redlock");
const eN = pick((x) => x.scenario === "e" && x.side === "node-redlock");
if (eO.length) {
  const jain = (r) => (r.fairness ? r.fairness.jain : NaN);
  const s = summary.scenarios.e = {
    redlock_cycles_per_s: med(eO, (r) => r.cycles_per_s), node_cycles_per_s: med(eN, (r) => r.cycles_per_s),
    redlock_acquire_p99_us: med(eO, (r) => r.acquire_us.p99), node_acquire_p99_us: med(eN, (r) => r.acquire_us.p99),
    redlock_acquire_max_us: med(eO, (r) => r.acquire_us.max), node_acquire_max_us: med(eN, (r) => r.acquire_us.max),
    redlock_failed: med(eO, (r) => Object.values(r.failed).reduce((p, q) => p + q, 0)),
    node_failed: med(eN, (r) => Object.values(r.failed).reduce((p, q) => p + q, 0)),
    redlock_jain: med(eO, jain), redlock_handoff_p50_us: med(eO, (r) => (r.handoff_us ? r.handoff_us.p50 : NaN)),
  };
  s.ours_over_node = ratio(s.redlock_cycles_per_s, s.node_cycles_per_s);
  rows.push(["(e) 64 workers, 8 resources, hold 1 ms, waiting", "successful cycles/s", fmt(s.redlock_cycles_per_s),
    fmt(s.node_cycles_per_s), "8,000 (R / hold)", `${fmt(s.ours_over_node, 2)}x node`, ">= 7,200", verdict(s.redlock_cycles_per_s >= 7200)]);
  rows.push(["", "acquire p99 (us)", fmt(s.redlock_acquire_p99_us), fmt(s.node_acquire_p99_us), "", "", "", ""]);
  rows.push(["", "acquire max (us)", fmt(s.redlock_acquire_max_us), fmt(s.node_acquire_max_us), "", "", "<= 100,000",
    verdict(s.redlock_acquire_max_us <= 100000)]);
  rows.push(["", "failed acquisitions", fmt(s.redlock_failed), fmt(s.node_failed), "", "", "", ""]);
  rows.push(["", "hand-off p50 (us), Jain's index", `${fmt(s.redlock_handoff_p50_us, 1)}, ${fmt(s.redlock_jain, 3)}`, "", "", "", "", ""]);
}

// ---- (f) fairness across processes --------------------------------------------------------------
const fP = pick((x) => x.scenario === "f" && x.side === "redlock-processes");
if (fP.length) {
  const s = summary.scenarios.f = {
    cycles_per_s: med(fP, (r) => r.cycles_per_s), min_over_mean: med(fP, (r) => r.fairness.min_over_mean),
    jain: med(fP, (r) => r.fairness.jain), acquire_max_us: med(fP, (r) => r.acquire_max_us),
    failed: med(fP, (r) => r.failed),
  };
  rows.push(["(f) 4 processes x 16 workers, 8 resources, waiting", "least worker / mean acquisitions",
    fmt(s.min_over_mean, 2), "", "", `Jain ${fmt(s.jain, 3)}`, ">= 0.25", verdict(s.min_over_mean >= 0.25)]);
  rows.push(["", "cycles/s (all processes)", fmt(s.cycles_per_s), "", "", "", "", ""]);
  rows.push(["", "acquire max (us), failed", `${fmt(s.acquire_max_us)}, ${fmt(s.failed)}`, "", "", "", "", ""]);
}

// ---- (d) N masters ---------------------------------------------------------------------------
const dRows = [];
const dRuns = pick((x) => x.scenario === "d");
if (dRuns.length) {
  summary.scenarios.d = [];
  for (const n of [...new Set(dRuns.map((x) => x.masters))].sort((a, b) => a - b)) {
    const one = dRuns.filter((x) => x.masters === n && x.r.config.workers === 1);
    const many = dRuns.filter((x) => x.masters === n && x.r.config.workers !== 1);
    const e = {
      masters: n,
      acquire_p50_us_1w: med(one, (r) => r.acquire_us.p50), acquire_p99_us_1w: med(one, (r) => r.acquire_us.p99),
      release_p50_us_1w: med(one, (r) => r.release_us.p50),
      cycles_per_s_128w: med(many, (r) => r.cycles_per_s), cpu_us_per_cycle_128w: med(many, (r) => r.client_cpu_us_per_cycle),
      acquire_p50_us_128w: med(many, (r) => r.acquire_us.p50),
      server_cpu_us_per_cycle_128w: med(many, (r) => (r.servers ? r.servers.cpu_us_per_cycle : NaN)),
    };
    e.cpu_us_per_cycle_per_master = e.cpu_us_per_cycle_128w / n;
    summary.scenarios.d.push(e);
    dRows.push([String(n), fmt(e.acquire_p50_us_1w, 1), fmt(e.acquire_p99_us_1w, 1), fmt(e.release_p50_us_1w, 1),
      fmt(e.cycles_per_s_128w), fmt(e.acquire_p50_us_128w), fmt(e.cpu_us_per_cycle_128w, 1), fmt(e.cpu_us_per_cycle_per_master, 2),
      fmt(e.server_cpu_us_per_cycle_128w, 1)]);
  }
}

// ---- Tables ----------------------------------------------------------------------------------
const header = ["scenario", "metric", "redlock", "node-redlock", "reference", "ratio", "target", ""];
const dHeader = ["N", "acquire p50 (us), 1 worker", "acquire p99 (us), 1 worker", "release p50 (us), 1 worker",
  "cycles/s, 128 workers", "acquire p50 (us), 128 workers", "client CPU us/cycle, 128 workers", "client CPU us/cycle per master",
  "servers' CPU us/cycle, 128 workers"];

function textTable(h, rs) {
  const w = h.map((_, i) => Math.max(h[i].length, ...rs.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => String(c).padEnd(w[i])).join("  ").trimEnd();
  return [line(h), w.map((x) => "-".repeat(x)).join("  "), ...rs.map(line)].join("\n");
}
function mdTable(h, rs) {
  const esc = (c) => String(c).replace(/\|/g, "\\|");
  return [`| ${h.map(esc).join(" | ")} |`, `|${h.map(() => "---").join("|")}|`, ...rs.map((r) => `| ${r.map(esc).join(" | ")} |`)].join("\n");
}

let text = `bench/compare: medians of ${rounds} round(s); a ratio is the ratio of two medians\n\n`;
if (rows.length) text += textTable(header, rows) + "\n";
if (dRows.length) text += `\n(d) redlock-bench on N masters\n\n${textTable(dHeader, dRows)}\n`;
process.stdout.write("\n" + text);

let md = `Medians of ${rounds} round(s); a ratio is the ratio of two medians.\n\n`;
if (rows.length) md += mdTable(header.slice(0, 7).concat(["verdict"]), rows) + "\n";
if (dRows.length) md += `\n**(d) N masters** (redlock-bench only)\n\n${mdTable(dHeader, dRows)}\n`;
fs.writeFileSync(path.join(dir, "summary.md"), md);
fs.writeFileSync(path.join(dir, "summary.json"), JSON.stringify(summary, null, 2) + "\n");

// ---- Plots -----------------------------------------------------------------------------------
const plots = [];
function gnuplot(name, script) {
  const gp = path.join(dir, `${name}.gp`);
  fs.writeFileSync(gp, `set terminal pngcairo size 800,480 font 'sans,10'\nset termoption noenhanced\nset output '${path.join(dir, name + ".png")}'\n${script}`);
  const r = spawnSync("gnuplot", [gp], { encoding: "utf8" });
  if (r.status !== 0) {
    console.error(`compare_report: gnuplot failed for ${name}: ${r.stderr || r.error}`);
    return;
  }
  plots.push(`${name}.png`);
}
function spectrumData(name, series) {  // series: [[title, spectrum]]
  const f = path.join(dir, `${name}.dat`);
  const lines = ["# x=1/(1-p) " + series.map((s) => s[0].replace(/ /g, "_")).join(" ")];
  const base = series[0][1];
  for (let i = 0; i < base.length; ++i) {
    const p = base[i][0];
    lines.push([1 / (1 - p / 100), ...series.map((s) => (s[1][i] ? s[1][i][1] : NaN))].join(" "));
  }
  fs.writeFileSync(f, lines.join("\n") + "\n");
  return f;
}
const xtics = "set logscale xy\nset grid xtics ytics mytics\nset key bottom right\nset xlabel 'percentile'\nset ylabel 'latency (us)'\n" +
  "set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, '99.999%%' 100000)\nset xrange [1:100000]\n";

if (aO.length && aN.length) {
  const o = medianRun(aO, (r) => r.cycles_per_s).r, n = medianRun(aN, (r) => r.cycles_per_s).r;
  const f = spectrumData("latency-128-workers", [["redlock acquire", o.acquire_spectrum], ["redlock release", o.release_spectrum],
    ["node-redlock acquire", n.acquire_spectrum], ["node-redlock release", n.release_spectrum]]);
  gnuplot("latency-128-workers", `set title "128 workers on 128 resources, 5 masters: latency by percentile (median round)"\n${xtics}` +
    `plot '${f}' using 1:2 with lines lw 2 title 'redlock acquire', '' using 1:3 with lines lw 2 dt 2 title 'redlock release', ` +
    `'' using 1:4 with lines lw 2 title 'node-redlock acquire', '' using 1:5 with lines lw 2 dt 2 title 'node-redlock release'\n`);
}
if (bO.length && bN.length) {
  const o = medianRun(bO, (r) => r.acquire_us.p50).r, n = medianRun(bN, (r) => r.acquire_us.p50).r;
  const rtt = summary.scenarios.b.set_rtt_p50_us;
  const f = spectrumData("latency-1-worker", [["redlock acquire", o.acquire_spectrum], ["node-redlock acquire", n.acquire_spectrum]]);
  gnuplot("latency-1-worker", `set title "1 worker, 5 masters: acquire latency by percentile (median round)"\n${xtics}` +
    `plot '${f}' using 1:2 with lines lw 2 title 'redlock acquire', '' using 1:3 with lines lw 2 title 'node-redlock acquire'` +
    (Number.isFinite(rtt) ? `, ${rtt} with lines lw 1 dt 3 lc rgb 'black' title 'one SET round trip (p50, redis-benchmark -c 1)'` : "") + "\n");
}
if (summary.scenarios.a || summary.scenarios.c) {
  const f = path.join(dir, "throughput.dat");
  const a = summary.scenarios.a || {}, c = summary.scenarios.c || {};
  const val = (x) => (Number.isFinite(x) ? x : 0);
  fs.writeFileSync(f, `# scenario redlock node-redlock ceiling\n"(a) 128 workers, 128 resources" ${val(a.redlock_cycles_per_s)} ${val(a.node_cycles_per_s)} ${val(a.ceiling_cycles_per_s)}\n` +
    `"(c) 64 workers, 8 resources" ${val(c.redlock_cycles_per_s)} ${val(c.node_cycles_per_s)} 0\n`);
  gnuplot("throughput", `set title "Successful lock+unlock cycles/s, 5 masters (medians of ${rounds} rounds)"\n` +
    "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\nset boxwidth 0.9\n" +
    "set grid ytics\nset ylabel 'cycles/s'\nset yrange [0:*]\nset key top right\nset format y '%.0f'\n" +
    `plot '${f}' using 2:xtic(1) title 'redlock', '' using 3 title 'node-redlock', '' using 4 title 'ceiling (redis-benchmark -P 32)'\n`);
}
if (summary.scenarios.d && summary.scenarios.d.length) {
  const f = path.join(dir, "masters.dat");
  fs.writeFileSync(f, "# N acquire_p50_1w cpu_us_per_cycle_128w cycles_per_s_128w\n" +
    summary.scenarios.d.map((e) => `${e.masters} ${e.acquire_p50_us_1w} ${e.cpu_us_per_cycle_128w} ${e.cycles_per_s_128w}`).join("\n") + "\n");
  gnuplot("masters", `set title "redlock-bench on N masters (medians of ${rounds} rounds)"\nset grid\nset key top left\n` +
    "set xlabel 'masters (N)'\nset xtics (3, 5, 7, 9)\nset xrange [2:10]\nset ylabel 'acquire p50, 1 worker (us)'\nset y2label 'client CPU per cycle, 128 workers (us)'\n" +
    "set yrange [0:*]\nset y2range [0:*]\nset ytics nomirror\nset y2tics\n" +
    `plot '${f}' using 1:2 with linespoints lw 2 pt 7 title 'acquire p50, 1 worker (left)', '' using 1:3 axes x1y2 with linespoints lw 2 pt 5 title 'CPU per cycle, 128 workers (right)'\n`);
}
if (plots.length) console.log(`\nplots: ${plots.map((p) => path.join(dir, p)).join(", ")}`);
