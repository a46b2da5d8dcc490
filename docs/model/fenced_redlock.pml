/*
 * Fenced Redlock, a model for spin: N masters, C clients, each client acquiring up to ROUNDS
 * times. Written for redlock's fencing design (docs/algorithm.md, "Fencing tokens"); checked by
 * docs/model/check.sh.
 *
 * What is modelled
 *  - Time: one global clock, advanced by its own process up to MAXT. A key is alive while
 *    now < its expiry. A client may be delayed between any two of its steps for as long as the
 *    clock runs meanwhile: that is the process pause (GC, SIGSTOP, a slow network) of
 *    Kleppmann's counterexample.
 *  - A master: its lock key (owner, expiry) and its fence counter. Each request to it is atomic
 *    on the master (a Lua script or one command). A request may be lost before it runs, or
 *    run and have its reply lost: that covers timeouts, dropped connections and restarts of a
 *    master that persists what it executed (appendfsync always). With RESTART defined, a
 *    master may also restart *without* persistence: key and counter forgotten.
 *  - Round 1, per master: SET key token NX PX ttl; where it succeeds, the counter c moves to
 *    c + 1, and the reply carries c. With a majority of grants,
 *    t = max(counters read) + 1. When every counted grant read the same c, t stands on each of
 *    them already: a holder with token t, no round 2.
 *  - Round 2 (the counters read differ), per master: set the counter to t only if the key
 *    still holds our token and the counter is not above t (at t, only our round 1 can have
 *    moved it there). A majority of commits, and a validity still positive, makes a holder
 *    with token t.
 *  - INCR_MAX defined: the unsound variant instead (round 1 INCRs the counter on each master
 *    that granted, the token is the largest value; no round 2).
 *
 * What is checked
 *  - Unique: no two holders are ever given the same token.
 *  - Ordered: a holder whose acquisition started after another holder had its token gets a
 *    larger token. With both, a store that refuses a token lower than the largest it has seen
 *    refuses every write of a holder that a later holder superseded.
 *  - CHECK_REACH defined: that every client can get the lock, each time it tries (a run where
 *    it does is the expected "violation"): Unique and Ordered would hold vacuously in a model
 *    where nobody ever holds.
 *  - CHECK_ME defined: mutual exclusion (never two clients that both believe they hold the lock)
 *    instead, which Redlock cannot promise: spin finds the pause that breaks it.
 */

#ifndef N
#define N 3
#endif
#ifndef C
#define C 2
#endif
#ifndef TTL
#define TTL 2
#endif
#ifndef MAXT
#define MAXT 6
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

#define MAJORITY (N / 2 + 1)
#define alive(i) (owner[i] != 0 && now < expiry[i])

byte now;
byte owner[N];      /* 0: no key; else the holder's client number + 1 */
byte expiry[N];
byte counter[N];    /* the fence counter beside the key */

byte holders;       /* clients that believe they hold the lock now */
int issued;         /* bit t: token t was given to a holder */
byte highest;       /* the largest token given so far */
byte holds;         /* how many times a holder was made */

active proctype clock()
{
    do
    :: now < MAXT -> now++
    :: else -> break
    od
}

proctype client(byte me)
{
    byte round, i, granted, committed, t, floor, t0, read, c;
    byte low = 255;     /* the smallest counter read (255: none yet) */

    for (round : 1 .. ROUNDS) {
        atomic { t0 = now; floor = highest; }

        /* Round 1: SET NX PX on every master; read its counter where it succeeds. */
        for (i : 0 .. N - 1) {
            if
            :: skip  /* the request is lost before the master runs it */
            :: atomic {
                   if
                   :: !alive(i) ->
                       owner[i] = me + 1; expiry[i] = now + TTL;
#ifdef INCR_MAX
                       counter[i]++;
                       c = counter[i];
#else
                       c = counter[i];
#ifndef MUT_NO_BUMP                                 /* mutation: round 1 leaves the counter */
                       counter[i] = c + 1;
#endif
#endif
                       if
                       :: granted++;
                          if :: c > read -> read = c :: else -> skip fi;
                          if :: c < low -> low = c :: else -> skip fi
                       :: skip  /* the reply is lost: the key stays until it expires */
                       fi;
                       c = 0
                   :: else -> skip
                   fi
               }
            fi
        }
        if
        :: granted < MAJORITY -> goto release
        :: else -> skip
        fi
#ifdef INCR_MAX
        t = read;
#else
#ifdef MUT_T_MAX
        t = read;                                   /* mutation: the largest counter, not one more */
#else
        t = read + 1;
#endif
#ifndef MUT_ONE_ROUND_ANY                           /* mutation: one round whatever was read */
        if
        :: low == read -> skip                      /* round 1 committed t on every grant */
        :: else ->
        /* Round 2: commit t where our key still stands and the counter is not above t. */
        for (i : 0 .. N - 1) {
            if
            :: skip
            :: atomic {
                   if
                   :: owner[i] == me + 1 && alive(i) &&
                      counter[i] <= t ->
                       counter[i] = t;
                       committed++
                   :: else -> skip
                   fi
               }
            fi
        }
#ifndef MUT_NO_COMMIT_MAJORITY                      /* mutation: no majority of commits needed */
        if
        :: committed < MAJORITY -> goto release
        :: else -> skip
        fi
#endif
        fi;
#endif
#endif
        /* Validity, judged from t0 (taken before round 1). */
        atomic {
            if
            :: now >= t0 + TTL -> goto release
            :: else ->
                assert(!(issued & (1 << t)));      /* Unique */
                assert(t > floor);                 /* Ordered */
                issued = issued | (1 << t);
                if :: t > highest -> highest = t :: else -> skip fi;
                holders++;
                holds++;
            fi
        }
#ifdef CHECK_REACH
        assert(holds < C * ROUNDS);                 /* Expected to fail: every acquisition can succeed */
#endif
#ifdef CHECK_ME
        assert(holders == 1);                       /* Mutual exclusion (expected to fail) */
#endif
        /* The holder may stop here as long as the clock runs (a pause), then works and lets go. */
        holders--;
release:
        /* Compare-and-delete on every master (each request may be lost). */
        for (i : 0 .. N - 1) {
            if
            :: skip
            :: atomic { if :: owner[i] == me + 1 -> owner[i] = 0 :: else -> skip fi }
            fi
        }
        /* Forget this acquisition's values: states that differ only in them are one state. */
        atomic { i = 0; granted = 0; committed = 0; t = 0; floor = 0; t0 = 0; read = 0; low = 255 }
    }
}

#ifdef RESTART
/* A master restarting without persistence forgets its key and its counter. */
active proctype restarts()
{
    byte i;
    do
    :: atomic { select(i : 0 .. N - 1); owner[i] = 0; counter[i] = 0 }
    :: break
    od
}
#endif

init
{
    byte c;
    atomic {
        for (c : 0 .. C - 1) {
            run client(c)
        }
    }
}
