/*
 * wasm.c: the WebAssembly binding of the engine's core (core/bfjoust.h),
 * behind the Lab's hill/web/static/lab/engine.js.  No engine logic here:
 * each export passes pointers into linear memory straight to the core, in
 * plain int32 arguments and results (what a wasm export can carry without
 * help), and engine.js reads the memory they point at.
 *
 * Built by `make setup` (see the Makefile) with clang --target=wasm32-wasi
 * as a reactor module: no entry point and no imports.
 */

#include <stddef.h>
#include <stdlib.h>

#include "core/bfjoust.h"

#define EXPORT(name) __attribute__((export_name(#name)))

/* engine.js reads a statistics record (bfj_stats) at these offsets, the
   layout hill/engine reads as STATS_RECORD. */
_Static_assert(offsetof(bfj_stats, cycles) == 0, "stats layout");
_Static_assert(offsetof(bfj_stats, heat) == 4, "stats layout");
_Static_assert(offsetof(bfj_stats, tape) == 244, "stats layout");
_Static_assert(offsetof(bfj_stats, decoy) == 274, "stats layout");
_Static_assert(offsetof(bfj_stats, ended) == 334, "stats layout");
_Static_assert(sizeof(bfj_stats) == 336, "stats layout");

/* The rules' numbers, so that engine.js holds none of its own. */
EXPORT(min_tape) int32_t wasm_min_tape(void) { return BFJ_MIN_TAPE; }
EXPORT(max_tape) int32_t wasm_max_tape(void) { return BFJ_MAX_TAPE; }
EXPORT(battles) int32_t wasm_battles(void) { return BFJ_BATTLES; }
EXPORT(max_cycles) int32_t wasm_max_cycles(void) { return BFJ_MAX_CYCLES; }
EXPORT(max_nest) int32_t wasm_max_nest(void) { return BFJ_MAX_NEST; }
EXPORT(max_source) int32_t wasm_max_source(void) { return BFJ_MAX_SOURCE; }
EXPORT(stats_size) int32_t wasm_stats_size(void) { return (int32_t)sizeof(bfj_stats); }

/* Buffers in linear memory (0 when out of memory). */
EXPORT(alloc) void *wasm_alloc(int32_t size) { return malloc(size > 0 ? (size_t)size : 1); }
EXPORT(release) void wasm_release(void *p) { free(p); }

/* Error kinds: 1..error_count()-1, each with its NUL-terminated name. */
EXPORT(error_count) int32_t wasm_error_count(void) { return BFJ_N_ERRORS; }
EXPORT(error_name) const char *wasm_error_name(int32_t kind) { return bfj_error_name(kind); }

/* Compile n bytes at source: the program, or 0 with error[0..2] = kind,
   offset, other offset (-1: none). */
EXPORT(compile)
bfj_program *wasm_compile(const unsigned char *source, int32_t n, int32_t *error)
{
    bfj_error err = {BFJ_OK, -1, -1};
    bfj_program *program = bfj_compile(source, n > 0 ? (size_t)n : 0, &err);
    error[0] = err.kind;
    error[1] = (int32_t)err.at;
    error[2] = (int32_t)err.other;
    return program;
}

EXPORT(program_free) void wasm_program_free(bfj_program *program) { bfj_free(program); }

EXPORT(instructions) int32_t wasm_instructions(const bfj_program *program)
{
    return bfj_instructions(program);
}

/* The 42 battles: outcomes[42] (int8), cycles[2] (the battle-cycles
   simulated, the games' cycles: doubles, exact below 2**53), stats: 0 or
   room for BFJ_BATTLES records.  0, or -1 (out of memory, bad max_cycles). */
EXPORT(joust)
int32_t wasm_joust(const bfj_program *left, const bfj_program *right, int32_t max_cycles,
                   int8_t *outcomes, double *cycles, bfj_stats *stats)
{
    bfj_joust_result result;
    if (bfj_joust(left, right, max_cycles, &result, stats) < 0)
        return -1;
    for (int i = 0; i < BFJ_BATTLES; i++)
        outcomes[i] = result.outcome[i];
    cycles[0] = (double)result.cycles;
    cycles[1] = (double)result.game_cycles;
    return 0;
}

/* A trace of one battle (0: out of memory or a bad argument); its fields
   through the trace_* exports below, freed by trace_free. */
EXPORT(trace)
bfj_trace *wasm_trace(const bfj_program *left, const bfj_program *right, int32_t tape_length,
                      int32_t kettle, int32_t max_cycles)
{
    bfj_trace *trace = malloc(sizeof *trace);
    if (trace && bfj_trace_battle(left, right, tape_length, kettle, max_cycles, trace) < 0) {
        free(trace);
        return NULL;
    }
    return trace;
}

EXPORT(trace_free) void wasm_trace_free(bfj_trace *trace)
{
    if (trace) {
        bfj_trace_free(trace);
        free(trace);
    }
}

EXPORT(trace_outcome) int32_t wasm_trace_outcome(const bfj_trace *t) { return t->outcome; }
EXPORT(trace_cycles) int32_t wasm_trace_cycles(const bfj_trace *t) { return t->cycles; }

/* int32[cycles]: the source offsets each side (0 left, 1 right) runs */
EXPORT(trace_source) const int32_t *wasm_trace_source(const bfj_trace *t, int32_t side)
{
    return t->source[side != 0];
}

/* int8[cycles + 1]: each side's absolute cell index */
EXPORT(trace_pointer) const int8_t *wasm_trace_pointer(const bfj_trace *t, int32_t side)
{
    return t->pointer[side != 0];
}

/* uint8[(cycles + 1) * tape_length] */
EXPORT(trace_tapes) const uint8_t *wasm_trace_tapes(const bfj_trace *t) { return t->tapes; }

/* The debugger (0: out of memory or a bad argument); debug_trace gives
   its trace, read with the trace_* exports (not freed by trace_free). */
EXPORT(debug_new)
bfj_debug *wasm_debug_new(const bfj_program *left, const bfj_program *right, int32_t tape_length,
                          int32_t kettle, int32_t max_cycles)
{
    return bfj_debug_new(left, right, tape_length, kettle, max_cycles);
}

EXPORT(debug_trace) const bfj_trace *wasm_debug_trace(const bfj_debug *debug)
{
    return bfj_debug_trace(debug);
}

/* The repeat counters before cycle+1 of `side`: how many (at most room are
   written to opens[] and values[]), -1 on a bad argument. */
EXPORT(debug_counters)
int32_t wasm_debug_counters(bfj_debug *debug, int32_t cycle, int32_t side, int32_t *opens,
                            int32_t *values, int32_t room)
{
    return bfj_debug_counters(debug, cycle, side, opens, values, room);
}

EXPORT(debug_free) void wasm_debug_free(bfj_debug *debug) { bfj_debug_free(debug); }
