#!/usr/bin/env node
// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
//
// node_redlock_holder.js: takes one lock with node-redlock (npm `redlock` v5, over ioredis) on
// the masters of REDLOCK_MASTERS, prints "held", releases it when a line arrives on standard
// input, prints "released" and exits. The interop test (node_redlock_wake.sh) runs it as the
// holder that a waiting redlock client must be woken by.
//
// usage: REDLOCK_MASTERS=redis://h:p,... node node_redlock_holder.js RESOURCE TTL_MS
// Modules are found through NODE_PATH. Exit status: 0 released, 1 a step failed.
"use strict";

const Redis = require("ioredis");
const { default: Redlock } = require("redlock");

const [resource, ttlText] = process.argv.slice(2);
const ttl = Number(ttlText);
const uris = (process.env.REDLOCK_MASTERS || "").split(",").filter((u) => u);
if (!resource || !(ttl > 0) || uris.length === 0) {
  process.stderr.write("usage: REDLOCK_MASTERS=redis://h:p,... node node_redlock_holder.js RESOURCE TTL_MS\n");
  process.exit(1);
}

const clients = uris.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
// No retries: the key must be free when the test starts.
const redlock = new Redlock(clients, { retryCount: 0 });

async function main() {
  const lock = await redlock.acquire([resource], ttl);
  process.stdout.write(`held ${lock.value}\n`);
  await new Promise((resolve) => process.stdin.once("data", resolve));
  await lock.release();
  // node-redlock's release resolves once a majority answered; on a master that did not have
  // its script yet, ioredis sends the script's body after the NOSCRIPT, behind our QUIT if we
  // quit now (a CI run left node-redlock's key on one master that way). Wait, at most 2 s,
  // until no master holds our value.
  const deadline = Date.now() + 2000;
  for (const c of clients) {
    while (Date.now() < deadline && (await c.get(resource)) === lock.value) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  process.stdout.write("released\n");
}

main()
  .then(() => 0, (e) => {
    process.stderr.write(`node_redlock_holder: ${e && e.message ? e.message : e}\n`);
    return 1;
  })
  .then(async (code) => {
    // quit(), not disconnect(): node-redlock's release resolves once a majority answered, and
    // its DEL to the other masters may still be queued; QUIT is answered after them, so no
    // key of ours is left behind by our exit (disconnect() dropped one in a CI run).
    await Promise.allSettled(clients.map((c) => c.quit()));
    process.exit(code);
  });
