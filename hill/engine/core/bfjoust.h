/*
 * bfjoust.h: the BF Joust engine's core, plain C (no Python, no libc beyond
 * malloc/free/memcpy/memset): parse, compile, joust, trace, statistics.
 *
 * Two thin bindings sit on it: hill/engine/_engine.c (the Python extension,
 * which releases the GIL around every call here) and hill/engine/wasm.c (the
 * WebAssembly module behind the Lab's hill/web/static/lab/engine.js).  Both
 * are built from this very source, so the hill and the browser play exactly
 * the same game.
 *
 * Every function is reentrant: compiled programs are immutable and may be
 * shared by threads; a joust, a trace or a debug session owns its memory.
 */
#ifndef BFJOUST_H
#define BFJOUST_H

#include <stddef.h>
#include <stdint.h>

#define BFJ_MIN_TAPE 10
#define BFJ_MAX_TAPE 30
#define BFJ_TAPES (BFJ_MAX_TAPE - BFJ_MIN_TAPE + 1)
#define BFJ_BATTLES (2 * BFJ_TAPES) /* sieve 10..30, then kettle 10..30 */
#define BFJ_MAX_CYCLES 100000
#define BFJ_MAX_COUNT 100000 /* a larger repeat count is read as this (RULES.md) */
#define BFJ_MAX_NEST 4096
/* The largest source the engine takes: its offsets are int32 and a
   program's instructions are counted in int32 with room to spare. */
#define BFJ_MAX_SOURCE (INT32_MAX / 4)

/* Parse errors: bfj_error_name gives each its name (the Python extension's
   PARSE_ERRORS, the WebAssembly binding's `kind`). */
enum {
    BFJ_OK,
    BFJ_ERR_UNMATCHED_OPEN_PAREN,    /* at the `(` */
    BFJ_ERR_UNMATCHED_CLOSE_PAREN,   /* at the `)` */
    BFJ_ERR_BRACE_WITHOUT_PAREN,     /* at the `{` */
    BFJ_ERR_SECOND_BRACE,            /* at the second `{`, other = the first */
    BFJ_ERR_UNMATCHED_CLOSE_BRACE,   /* at the `}` */
    BFJ_ERR_UNCLOSED_BRACE,          /* at the `{`, other = the `)` */
    BFJ_ERR_UNMATCHED_OPEN_BRACKET,  /* at the `[` */
    BFJ_ERR_UNMATCHED_CLOSE_BRACKET, /* at the `]` */
    BFJ_ERR_BRACKET_CROSSES_OUT,     /* at the `)`/`}` closing a level, other = the `[` */
    BFJ_ERR_BRACKET_CROSSES_IN,      /* at the `]`, other = the unclosed `(`/`{` */
    BFJ_ERR_PAREN_TOO_DEEP,          /* at the `(` */
    BFJ_ERR_BRACKET_TOO_DEEP,        /* at the `[` */
    BFJ_ERR_SOURCE_TOO_LARGE,        /* at BFJ_MAX_SOURCE: the source is longer */
    BFJ_ERR_NO_MEMORY,               /* not a parse error: out of memory */
    BFJ_N_ERRORS
};

typedef struct {
    int kind;          /* BFJ_OK or BFJ_ERR_* */
    int64_t at, other; /* byte offsets in the source; other -1: none */
} bfj_error;

/* "unmatched_open_paren" ...; NULL for BFJ_OK and out of range. */
const char *bfj_error_name(int kind);

typedef struct bfj_program bfj_program;

/* Compile `n` bytes of program text.  NULL on failure, with *err saying why
   (BFJ_ERR_NO_MEMORY when out of memory). */
bfj_program *bfj_compile(const unsigned char *source, size_t n, bfj_error *err);
void bfj_free(bfj_program *program);
int32_t bfj_instructions(const bfj_program *program);

/* How a battle ended (bfj_stats.ended), bits: */
#define BFJ_END_LEFT_FLAG 1   /* the left program's flag was zero two cycles running */
#define BFJ_END_RIGHT_FLAG 2
#define BFJ_END_LEFT_FELL 4   /* the left program ran off the tape */
#define BFJ_END_RIGHT_FELL 8
#define BFJ_END_LIMIT 16      /* the cycle limit (or a tie proven by repetition) */

/* One battle's statistics (docs/analytics.md; hill/engine reads this
   layout as STATS_RECORD): cells as the left program sees the tape. */
typedef struct {
    int32_t cycles;
    int32_t heat[2][BFJ_MAX_TAPE];
    int8_t tape[BFJ_MAX_TAPE];
    uint8_t decoy[2][BFJ_MAX_TAPE];
    int16_t ended; /* BFJ_END_* bits */
} bfj_stats;

typedef struct {
    int8_t outcome[BFJ_BATTLES]; /* +1 left wins, 0 tie, -1 right wins */
    long long cycles;            /* battle-cycles simulated (for benchmarks) */
    long long game_cycles;       /* the 42 games' lengths added up */
} bfj_joust_result;

/* Play the 42 battles.  `stats`: NULL, or room for BFJ_BATTLES records.
   Returns 0, or -1 when out of memory.  max_cycles: 1..BFJ_MAX_CYCLES. */
int bfj_joust(const bfj_program *left, const bfj_program *right, int32_t max_cycles,
              bfj_joust_result *result, bfj_stats *stats);

/* One battle, every cycle: state k (0..cycles) is the state after k cycles. */
typedef struct {
    int32_t tape_length, kettle, max_cycles;
    int outcome;       /* +1, 0, -1 */
    int32_t cycles;    /* cycles played */
    int32_t *source[2];  /* [k], k < cycles: source byte offset of the instruction
                            each program executes in cycle k+1, -1 past its end */
    int8_t *pointer[2];  /* [k], k <= cycles: the absolute cell index */
    uint8_t *tapes;      /* [k * tape_length + c], k <= cycles */
} bfj_trace;

/* Run one battle recording every cycle into *trace (which owns its arrays:
   bfj_trace_free).  Returns 0, or -1 when out of memory or on a bad
   argument (tape length outside 10..30, max_cycles outside 1..100000). */
int bfj_trace_battle(const bfj_program *left, const bfj_program *right, int32_t tape_length,
                     int kettle, int32_t max_cycles, bfj_trace *trace);
void bfj_trace_free(bfj_trace *trace);

/* The debugger: a traced battle, with snapshots every BFJ_DEBUG_EVERY cycles
   from which the repeat counters of any cycle are replayed. */
#define BFJ_DEBUG_EVERY 1024
typedef struct bfj_debug bfj_debug;

bfj_debug *bfj_debug_new(const bfj_program *left, const bfj_program *right,
                         int32_t tape_length, int kettle, int32_t max_cycles);
const bfj_trace *bfj_debug_trace(const bfj_debug *debug);
/* The repeat counters live before the instruction `side` (0 left, 1 right)
   executes in cycle `cycle`+1, outermost first: opens[i] the byte offset of
   the `(`, `{` or `}` that holds counter i, values[i] its value.  Returns
   how many (at most `room` are written), or -1 on a bad argument. */
int32_t bfj_debug_counters(bfj_debug *debug, int32_t cycle, int side, int32_t *opens,
                           int32_t *values, int32_t room);
void bfj_debug_free(bfj_debug *debug);

#endif
