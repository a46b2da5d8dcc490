/*
 * A read-write lock over a quorum, a model for spin: M masters, W writers and R readers, each
 * client making one acquisition attempt. Written for redlock's read-write lock design (issue
 * 32; the argument is in docs/algorithm.md); checked by docs/model/check.sh. The time, fault
 * and step structure are those of semaphore.pml (read its header first).
 *
 * The design (default), per master
 *  - a writer key (one token, with expiry), a set of readers (token -> expiry: each entry has
 *    its own), and a writer-intent marker (one token, with expiry) that a waiting writer sets
 *    where it is refused, so that new readers are refused while a writer waits.
 *  - Reader script: refused if a live writer key or a live intent marker exists, else add the
 *    reader (expiry TTL).
 *  - Writer script: refused if a live writer key of another writer or any live reader exists
 *    (and then it sets its intent marker there, TTL), else set the writer key (TTL) and drop
 *    its own intent marker.
 *  - Each acquisition needs a majority (M/2+1) of grants and validity left (TTL from t0, taken
 *    before the first request). Letting go, or failing, deletes the client's token everywhere
 *    (its reader entry; or its writer key; a writer's intent markers stay until they expire, so
 *    that they keep readers out while it retries).
 *
 * Variants
 *  - SHARED_READ_TTL: the unsound variant. The readers' set is one key with one expiry, set by
 *    the reader that creates the set; a reader joining a live set adds itself and leaves the
 *    expiry as it is (SADD, then PEXPIRE only when SADD created the key -- or PEXPIRE NX). The
 *    set, with every reader in it, expires with the first reader's TTL, while a reader that
 *    joined later is still within its validity: a writer gets in beside it. Expected: violated.
 *  - MUT_WRITER_IGNORES_READERS (mutation): the writer script does not look at the readers.
 *  - MUT_READER_IGNORES_WRITER (mutation): the reader script looks at the intent marker only,
 *    not at the writer key (a writer that holds has dropped its marker).
 *
 * What is modelled: as in semaphore.pml -- one clock that ticks at any moment without bound,
 * everything timed kept as ticks left; pauses between any two steps of a client; each script
 * atomic on its master; requests lost before they run, replies lost after, releases lost; up to
 * LOSSES lost messages in a run.
 * What is not modelled: restarts without persistence, clock drift, retries and extensions (one
 * attempt per client), upgrades (reader to writer), and liveness: that a waiting writer is not
 * starved is what the intent marker is for, but it is a liveness property and not checked
 * here; safety does not depend on the marker (it only refuses readers).
 *
 * What is checked
 *  - Exclusive: never a writer holding (within its validity) beside anyone else holding (within
 *    validity), reader or writer; asserted each time a client starts to hold.
 *  - CHECK_REACH: a run where the two readers hold together and, later, the writer holds (the
 *    expected "violation"), so that Exclusive is not true only because nobody holds, and the
 *    readers' sharing is not lost.
 *
 * The printf lines ("MSC: ...") are for reading a counterexample: after check.sh's pan has
 * written its trail, `spin -t DEFINES file.pml | grep MSC` replays it; the verifier skips them.
 */

#ifndef M
#define M 3
#endif
#ifndef W
#define W 1     /* clients 0 .. W-1 are writers */
#endif
#ifndef R
#define R 2     /* clients W .. W+R-1 are readers */
#endif
#ifndef TTL
#define TTL 2
#endif
#ifndef LOSSES
#define LOSSES 1
#endif

#define C (W + R)
#define MAJORITY (M / 2 + 1)
/* A message may be lost while the run's budget of LOSSES lost messages is not spent. */
#define lose (losses < LOSSES) -> losses++

byte losses;        /* messages lost so far */
byte wowner[M];     /* the writer key: 0 when absent, else the writer's number + 1 */
byte wleft[M];      /* its ticks left (0: absent) */
byte iowner[M];     /* the intent marker: 0 when absent, else the writer's number + 1 */
byte ileft[M];
byte rleft[M * R];  /* per master and reader: ticks left of its entry in the readers' set */

byte valid[C];      /* ticks left of the client's validity (TTL from t0), 0 once spent */
bool holds[C];      /* holding within validity */
bool overlapped;    /* CHECK_REACH: the two readers held together */

/* A tick: everything timed counts down; what reaches 0 is gone. */
active proctype clock()
{
    byte x;
    do
    :: d_step {
           printf("MSC: tick\n");
           for (x : 0 .. M - 1) {
               if
               :: wleft[x] > 1 -> wleft[x]--
               :: wleft[x] == 1 -> wleft[x] = 0; wowner[x] = 0
               :: else -> skip
               fi;
               if
               :: ileft[x] > 1 -> ileft[x]--
               :: ileft[x] == 1 -> ileft[x] = 0; iowner[x] = 0
               :: else -> skip
               fi
           }
           for (x : 0 .. M * R - 1) {
               if :: rleft[x] > 0 -> rleft[x]-- :: else -> skip fi
           }
           for (x : 0 .. C - 1) {
               if
               :: valid[x] > 1 -> valid[x]--
               :: valid[x] == 1 -> valid[x] = 0; holds[x] = false
               :: else -> skip
               fi
           }
           x = 0
       }
    od
}

/* The script of one attempt on master i; sets k to 1 when it grants. */
inline acquire_on(i)
{
    d_step {
        k = 0;
        if
        :: me < W ->    /* writer */
            j = 0;
#ifndef MUT_WRITER_IGNORES_READERS
            for (j : 0 .. R - 1) {
                if :: rleft[i * R + j] > 0 -> k = 1 :: else -> skip fi
            }
#endif
            if
            :: k == 0 && !(wleft[i] > 0 && wowner[i] != me + 1) ->
                wowner[i] = me + 1; wleft[i] = TTL; k = 1;
                if :: iowner[i] == me + 1 -> iowner[i] = 0; ileft[i] = 0 :: else -> skip fi;
                printf("MSC: master %d grants the writer key to writer %d\n", i, me)
            :: else ->
                iowner[i] = me + 1; ileft[i] = TTL; k = 0;
                printf("MSC: master %d refuses writer %d: intent set\n", i, me)
            fi
        :: else ->      /* reader */
#ifdef MUT_READER_IGNORES_WRITER
            if
            :: ileft[i] > 0 -> k = 0
#else
            if
            :: wleft[i] > 0 || ileft[i] > 0 -> k = 0
#endif
            :: else ->
#ifdef SHARED_READ_TTL
                /* one expiry for the whole set: that of the live set if there is one */
                x = TTL;
                for (j : 0 .. R - 1) {
                    if :: rleft[i * R + j] > 0 -> x = rleft[i * R + j] :: else -> skip fi
                }
                rleft[i * R + me - W] = x;
                x = 0;
#else
                rleft[i * R + me - W] = TTL;
#endif
                k = 1;
                printf("MSC: master %d adds reader %d\n", i, me)
            fi
        fi;
        j = 0
    }
    if
    :: k != 0 ->
        if
        :: got++
        :: lose;    /* the reply is lost: the key (or entry) stays until it expires */
            printf("MSC: reply of master %d to client %d lost\n", i, me)
        fi
    :: else -> skip
    fi;
    k = 0
}

/* Delete our token on master i: our reader entry, or our writer key. */
inline release_on(i)
{
    d_step {
        if
        :: me < W -> if :: wowner[i] == me + 1 -> wowner[i] = 0; wleft[i] = 0 :: else -> skip fi
        :: else -> rleft[i * R + me - W] = 0
        fi
    }
}

/* The verdict, when the last reply is in: a majority of grants and validity left; then
 * Exclusive. */
inline verdict()
{
    d_step {
        if
        :: got < MAJORITY || valid[me] == 0 -> valid[me] = 0
        :: else ->
            holds[me] = true;
            printf("MSC: client %d holds (as a writer: %d)\n", me, me < W);
            for (j : 0 .. C - 1) {
                assert(j == me || !holds[j] || (me >= W && j >= W));    /* Exclusive */
            }
#if defined(CHECK_REACH) && R >= 2
            if :: me >= W && holds[W] && holds[W + 1] -> overlapped = true :: else -> skip fi;
            assert(!(overlapped && me < W));    /* expected to fail: readers shared, then a writer held */
#endif
            j = 0
        fi;
        got = 0
    }
}

proctype client(byte me)
{
    byte i, j, k, x, got;

    /* One script per master, each one atomic step; t0 is taken with the first request, the
     * verdict made with the last reply, letting go done with the first release (semaphore.pml
     * says why these merges keep every run, as far as the masters and other clients see). */
    do
    :: atomic {
           i < M ->
           if :: i == 0 -> valid[me] = TTL :: else -> skip fi;
           if
           :: lose;    /* the request is lost before the master runs it */
               printf("MSC: request of client %d to master %d lost\n", me, i)
           :: acquire_on(i)
           fi;
           i++;
           if
           :: i == M ->
               if
               :: skip
               :: valid[me] = 0    /* a pause past the validity before the verdict */
               fi;
               verdict();
               goto release
           :: else -> skip
           fi
       }
    od;

    /* A holder may stop here as long as the clock runs (a pause), then works and lets go: it
     * stops counting as a holder with its first release. */
release:
    /* Release everywhere (masters M-1 down to 0); each request may be lost. */
    do
    :: atomic {
           i > 0 ->
           if :: i == M -> holds[me] = false; valid[me] = 0 :: else -> skip fi;
           i--;
           if
           :: lose     /* lost */
           :: release_on(i)
           fi
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
