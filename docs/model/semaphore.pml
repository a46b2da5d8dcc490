/*
 * A counting semaphore over a quorum, a model for spin: M masters, N permits, C clients, each
 * client making one acquisition attempt. Written for redlock's semaphore design ("slot
 * mutexes", issue 32; the argument is in docs/algorithm.md); checked by docs/model/check.sh.
 *
 * The design (default)
 *  - Permit j (0..N-1) is a mutex key `name:permit:j` on every master.
 *  - One attempt sends one script to every master, with the N permit keys in an order that is a
 *    rotation from an offset the client picks (at random; here: any offset). On a master the
 *    script takes the FIRST free key in that order (SET NX PX ttl with the attempt's token) and
 *    answers its index, or "none" when all N keys are held.
 *  - The client holds permit j when a majority (M/2+1) of masters granted that same j and the
 *    validity (TTL from t0, taken before the requests) is still positive. It then releases its
 *    token on the other masters (those that did not answer j); a failed attempt releases its
 *    token everywhere. Letting go releases everywhere.
 *
 * Variants
 *  - MAJORITY_COUNT: node redis-semaphore's RedlockSemaphore instead. Each master admits up to
 *    N holders (a set of tokens with expiries: admit when fewer than N live entries), and a
 *    client holds when a majority of masters admitted it. Expected: N+1 holders.
 *  - MUT_SUM_PERMITS (mutation of the design): hold when a majority of masters granted *some*
 *    permit, different permits summed. Expected: caught (N+1 holders).
 *  - MUT_LATE_T0 (mutation of the design): the validity counted from the replies instead of
 *    from t0, taken before the first request. Expected: caught (N+1 live holders: a client
 *    paused between its requests believes it holds after its first keys expired).
 *
 * What is modelled (the fault model of fenced_redlock.pml)
 *  - One global clock that ticks at any moment, without bound. Every timed thing (a key, a set
 *    entry, a client's validity) is kept as the number of ticks it has left, counted down by
 *    each tick: a key is alive while it has ticks left; one set with TTL has TTL left. This is
 *    the model of fenced_redlock.pml (now < expiry) with the absolute time left out, so that
 *    states that differ only by a shift in time are one state and time needs no bound. A client
 *    may be delayed between any two of its steps for any number of ticks: the process pause.
 *  - Each request is atomic on its master (one Lua script). A request may be lost before it
 *    runs, or run and have its reply lost (timeouts, dropped connections, restarts of a master
 *    that persists what it executed). Releases may be lost too (the keys then expire). Unlike
 *    fenced_redlock.pml, the losses are bounded: at most LOSSES lost messages in a run (1 in
 *    check.sh; LOSSES=2 is exhaustive too, 20 million states, over a minute).
 *  - The rotation offset is chosen nondeterministically, which covers every random choice.
 *  - Steps: see the comment at the top of `client` (three steps merged into neighbours, and
 *    client 0's offset fixed by symmetry; neither leaves out a run that the masters and the
 *    other clients could tell apart).
 * What is not modelled
 *  - Masters restarting without persistence (the mutex already fails there: fenced_redlock.pml,
 *    check `restart`), clock drift between client and masters (one clock, no drift: the
 *    validity margin for drift is taken as exact), retries and extensions (one attempt per
 *    client), fencing tokens for permits, and liveness (an attempt may fail forever).
 *  - Bounds: M = 3, N = 2, C = 3 in check.sh (the smallest where N+1 holders are possible);
 *    M = 5 only for the MAJORITY_COUNT variant (the design at M = 5, even with no loss, did
 *    not finish in 5 minutes here: over 56 million states), TTL = 2 ticks.
 *
 * What is checked
 *  - Bounded: at no time more than N clients hold a permit within their validity (asserted
 *    each time a client starts to hold, the only moment that number grows). A holder past its
 *    validity is not counted: like the mutex (fenced_redlock.pml, check `mutex`), a paused
 *    holder can outlive its keys, and only validity (or fencing) speaks about it.
 *  - Distinct (design only): no two live holders of the same permit.
 *  - CHECK_REACH: that N clients can hold together (the expected "violation"), so that Bounded
 *    is not true only because few clients ever hold.
 *
 * The printf lines ("MSC: ...") are for reading a counterexample: after check.sh's pan has
 * written its trail, `spin -t DEFINES file.pml | grep MSC` replays it; the verifier skips them.
 */

#ifndef M
#define M 3
#endif
#ifndef N
#define N 2
#endif
#ifndef C
#define C 3
#endif
#ifndef TTL
#define TTL 2
#endif

#ifndef LOSSES
#define LOSSES 1
#endif

#define MAJORITY (M / 2 + 1)
/* A message may be lost while the run's budget of LOSSES lost messages is not spent. */
#define lose (losses < LOSSES) -> losses++

byte losses;        /* messages lost so far */
#ifdef MAJORITY_COUNT
byte entry[M * C];  /* per master and client: ticks left to its entry in the holders' set, 0: none */
#define entry_alive(i, c) (entry[(i) * C + (c)] > 0)
#else
byte owner[M * N];  /* per master and permit key: 0 when absent, else the client number + 1 */
byte left[M * N];   /* ticks left before the key expires (0: absent) */
#define key_alive(i, j) (left[(i) * N + (j)] > 0)
#endif

byte valid[C];      /* ticks left of the client's validity (TTL from t0), 0 once spent */
byte permit[C];     /* 0: not holding within validity; else the permit held + 1 (1 in MAJORITY_COUNT) */

/* A tick: everything timed counts down; what reaches 0 is gone (an expired key, a holder whose
 * validity is spent: it is no longer counted as a holder, whatever it believes). */
active proctype clock()
{
    byte x;
    do
    :: d_step {
           printf("MSC: tick\n");
#ifdef MAJORITY_COUNT
           for (x : 0 .. M * C - 1) {
               if :: entry[x] > 0 -> entry[x]-- :: else -> skip fi
           }
#else
           for (x : 0 .. M * N - 1) {
               if
               :: left[x] > 1 -> left[x]--
               :: left[x] == 1 -> left[x] = 0; owner[x] = 0
               :: else -> skip
               fi
           }
#endif
           for (x : 0 .. C - 1) {
               if
               :: valid[x] > 1 -> valid[x]--
               :: valid[x] == 1 -> valid[x] = 0; permit[x] = 0
               :: else -> skip
               fi
           }
           x = 0
       }
    od
}

/* The script of one attempt on master i (the request reached it; its reply may be lost). */
inline acquire_on(i)
{
    d_step {
#ifdef MAJORITY_COUNT
        count = 0;
        for (j : 0 .. C - 1) {
            if :: entry_alive(i, j) -> count++ :: else -> skip fi
        }
        if
        :: count < N -> entry[i * C + me] = TTL; k = 1;
            printf("MSC: master %d admits client %d\n", i, me)
        :: else -> k = 0
        fi;
        count = 0; j = 0
#else
        k = 0;
        for (j : 0 .. N - 1) {
            if
            :: k == 0 && !key_alive(i, (off + j) % N) -> k = (off + j) % N + 1
            :: else -> skip
            fi
        }
        if
        :: k != 0 -> owner[i * N + k - 1] = me + 1; left[i * N + k - 1] = TTL;
            printf("MSC: master %d grants permit %d to client %d\n", i, k - 1, me)
        :: else -> skip
        fi;
        j = 0
#endif
    }
    if
    :: k != 0 ->
        if
        :: got[i] = k
        :: lose;    /* the reply is lost: the key (or entry) stays until it expires */
            printf("MSC: reply of master %d to client %d lost\n", i, me)
        fi
    :: else -> skip
    fi;
    k = 0
}

/* Delete our token on master i (every permit key that holds it, or our entry). */
inline release_on(i)
{
    d_step {
#ifdef MAJORITY_COUNT
        entry[i * C + me] = 0
#else
        for (j : 0 .. N - 1) {
            if :: owner[i * N + j] == me + 1 -> owner[i * N + j] = 0; left[i * N + j] = 0 :: else -> skip fi
        }
        j = 0
#endif
    }
}

/* The replies and the permit held are not needed any more: forget them, so that states that
 * differ only in them are one state. */
inline forget_replies()
{
    d_step {
        held = 0;
        for (j : 0 .. M - 1) { got[j] = 0 }
        j = 0
    }
}

/* The verdict, when the last reply is in: which permit (if any) a majority granted, then the
 * validity (ticks left since t0), then Bounded (and Distinct). Sets i to the first master to
 * release on (M: none; with permit[me] == 0: the attempt failed, release everywhere). */
inline verdict()
{
    d_step {
        held = 0;
#if defined(MAJORITY_COUNT) || defined(MUT_SUM_PERMITS)
        /* MUT_SUM_PERMITS: a majority of masters granted some permit, different ones summed */
        count = 0;
        for (i : 0 .. M - 1) {
            if :: got[i] != 0 -> count++ :: else -> skip fi
        }
        if :: count >= MAJORITY -> held = 1 :: else -> skip fi;
#else
        for (j : 1 .. N) {
            count = 0;
            for (i : 0 .. M - 1) {
                if :: got[i] == j -> count++ :: else -> skip fi
            }
            if :: count >= MAJORITY -> held = j :: else -> skip fi
        }
#endif
        count = 0; i = 0; j = 0;
#ifdef MUT_LATE_T0
        valid[me] = TTL;    /* mutation: the validity counted from the replies, not from t0 */
#endif
        if
        :: held == 0 || valid[me] == 0 ->
            valid[me] = 0; i = M    /* failed: release everywhere */
        :: else ->
            permit[me] = held;
            printf("MSC: client %d holds (permit %d)\n", me, held - 1);
            live = 0;
            for (i : 0 .. C - 1) {
                if
                :: permit[i] != 0 ->
                    live++;
#if !defined(MAJORITY_COUNT) && !defined(MUT_SUM_PERMITS)
                    assert(i == me || permit[i] != held);     /* Distinct */
#endif
                :: else -> skip
                fi
            }
            assert(live <= N);                                /* Bounded */
#ifdef CHECK_REACH
            assert(live < N);       /* expected to fail: N clients can hold together */
#endif
            live = 0;
#if !defined(MAJORITY_COUNT) && !defined(MUT_SUM_PERMITS)
            /* the first master to release our token on (one that did not answer `held`) */
            i = 0;
            do :: i < M && got[i] == held -> i++ :: else -> break od
#else
            i = M
#endif
        fi;
        if
        :: i == M ->    /* the replies and the permit held are not needed any more */
            held = 0;
            for (j : 0 .. M - 1) { got[j] = 0 }
            j = 0
        :: else -> skip
        fi
    }
}

proctype client(byte me)
{
    byte i, j, k, off, held, count, live;
    byte got[M];    /* the reply of master i: 0 none (refused or lost), else the permit + 1 */

    /* One script per master, each one atomic step (the request may be lost before it runs).
     * Three steps are merged into their neighbours, which keeps every run of the unmerged
     * model as far as the masters and the other clients can tell, and only makes holders count
     * for longer:
     *  - t0 (the validity's start) and the rotation's offset are taken with the first request;
     *  - the verdict is made with the last reply;
     *  - letting go is done with the first release.
     * A pause between t0 and the first request, or between the last reply and the verdict,
     * changes only whether the validity is spent at the verdict: the branch that spends it
     * there (below) covers both. A pause between letting go and the first release changes
     * nothing that others see.
     * Client 0 takes offset 0: the permits are interchangeable (relabelling them by a rotation
     * maps runs to runs), so this leaves out only runs that are relabellings of kept ones. */
    do
    :: atomic {
           i < M ->
           if
           :: i == 0 ->
               valid[me] = TTL;
               if :: me == 0 -> off = 0 :: else -> select(off : 0 .. N - 1) fi
           :: else -> skip
           fi;
           if
           :: lose;    /* the request is lost before the master runs it */
               printf("MSC: request of client %d to master %d lost\n", me, i)
           :: acquire_on(i)
           fi;
           i++;
           if
           :: i == M ->
               off = 0;
               if
               :: skip
               :: valid[me] = 0    /* a pause past the validity before the verdict */
               fi;
               verdict();
               if :: permit[me] == 0 -> goto release :: else -> goto others fi
           :: else -> skip
           fi
       }
    od;

others:
#if !defined(MAJORITY_COUNT) && !defined(MUT_SUM_PERMITS)
    /* Release our token on the masters that did not grant the permit held (their reply said
     * another permit, or none, or was lost). */
    do
    :: atomic {
           i < M ->
           if
           :: lose  /* lost */
           :: release_on(i)
           fi;
           i++;
           do :: i < M && got[i] == held -> i++ :: else -> break od;
           if :: i == M -> forget_replies() :: else -> skip fi
       }
    :: i == M -> break
    od;
#endif

    /* The holder may stop here as long as the clock runs (a pause), then works and lets go:
     * it stops counting as a holder with its first release. */
release:
    /* Release everywhere (masters M-1 down to 0); each request may be lost. */
    do
    :: atomic {
           i > 0 ->
           if :: i == M -> permit[me] = 0; valid[me] = 0 :: else -> skip fi;
           i--;
           if
           :: lose  /* lost */
           :: release_on(i)
           fi;
           if :: i == 0 -> forget_replies() :: else -> skip fi
       }
    :: i == 0 -> break
    od
}

init
{
    byte c;
    atomic {
        for (c : 0 .. C - 1) {
            run client(c)
        }
    }
}
