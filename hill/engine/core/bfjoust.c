/*
 * bfjoust.c: the BF Joust engine's core (parse, compile, joust, trace,
 * battle statistics, the debugger's replays), plain C; its API is
 * bfjoust.h.  The Python extension (hill/engine/_engine.c) and the
 * WebAssembly module (hill/engine/wasm.c) are thin bindings over it.
 *
 * Programs are compiled to a flat instruction array in which repeats stay
 * repeats: `(P)*N` runs with a counter on a small per-program stack, never by
 * expanding P.  `(A{B}C)%N` counts down through the copies of A and up through
 * the copies of C, so a `[` in the i-th copy of A jumps to the `]` in the
 * (N-i+1)-th copy of C with the very same counter: no bookkeeping is needed
 * to make a crossing loop land where the written-out program would.
 *
 * A joust is 42 battles.  Until the two programs have between them visited
 * every cell of the shortest tape still running, nothing either of them does
 * can depend on the tape length, and neither can tell the polarity (a zero
 * test is blind to the sign of a program's own cells).  So one "shared"
 * battle is simulated on a wide tape and each (length, polarity) battle is
 * forked off it only when the two visited ranges meet on that length.
 *
 * The interpreter (run_battle) runs one dispatch per instruction, with
 * superinstructions for the hottest pairs; beside it, each in a section of
 * its own with the argument for why it is exact, the shortcuts that decide
 * most battles without simulating most of their cycles:
 *   - repeated states: a tie proven early, or a jump ahead by whole periods
 *     when everything but some repeat counters comes back (repeat_of);
 *   - spinning together: both programs in short loops of + - . alone, run
 *     ahead by arithmetic (run_spins).
 * Statistics (cycles, final tape, heat, decoys) are an option of the same
 * battles, counted so that every shortcut keeps them exact.  Traces and the
 * debugger run the same interpreter one cycle at a time, with no shortcut.
 */

#include "bfjoust.h"

#include <stdlib.h>
#include <string.h>

#define MIN_TAPE BFJ_MIN_TAPE
#define MAX_TAPE BFJ_MAX_TAPE
#define N_TAPES BFJ_TAPES
#define N_BATTLES BFJ_BATTLES
#define MAX_CYCLES BFJ_MAX_CYCLES
#define MAX_COUNT BFJ_MAX_COUNT
#define MAX_NEST BFJ_MAX_NEST

static const char *const ERROR_NAMES[BFJ_N_ERRORS] = {
    [BFJ_ERR_UNMATCHED_OPEN_PAREN] = "unmatched_open_paren",
    [BFJ_ERR_UNMATCHED_CLOSE_PAREN] = "unmatched_close_paren",
    [BFJ_ERR_BRACE_WITHOUT_PAREN] = "brace_without_paren",
    [BFJ_ERR_SECOND_BRACE] = "second_brace",
    [BFJ_ERR_UNMATCHED_CLOSE_BRACE] = "unmatched_close_brace",
    [BFJ_ERR_UNCLOSED_BRACE] = "unclosed_brace",
    [BFJ_ERR_UNMATCHED_OPEN_BRACKET] = "unmatched_open_bracket",
    [BFJ_ERR_UNMATCHED_CLOSE_BRACKET] = "unmatched_close_bracket",
    [BFJ_ERR_BRACKET_CROSSES_OUT] = "bracket_crosses_out",
    [BFJ_ERR_BRACKET_CROSSES_IN] = "bracket_crosses_in",
    [BFJ_ERR_PAREN_TOO_DEEP] = "paren_too_deep",
    [BFJ_ERR_BRACKET_TOO_DEEP] = "bracket_too_deep",
    [BFJ_ERR_SOURCE_TOO_LARGE] = "source_too_large",
    [BFJ_ERR_NO_MEMORY] = "no_memory",
};

const char *bfj_error_name(int kind)
{
    return kind > BFJ_OK && kind < BFJ_N_ERRORS ? ERROR_NAMES[kind] : NULL;
}

/* The shared battle's tape: wide enough that the two programs' visited
   ranges never meet on it before every real tape length has been forked. */
#define WIDE_TAPE 64

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

enum {
    /* real instructions: each takes one cycle */
    OP_INC, OP_DEC, OP_LEFT, OP_RIGHT, OP_WAIT, OP_LOOP1, OP_LOOP2,
    OP_LOOP1X, OP_LOOP2X, /* a loop from A into C of (A{B}C): see run_battle */
    /* superinstructions, in compiled code only (see fuse_repeat_ends): a
       `+`, `-` or `.` and the repeat end that follows it, counting down (the
       `)` of (P)*N and the `{` of (A{B}C)) or up (the `)` of (A{B}C)) */
    OP_INC_DOWN, OP_DEC_DOWN, OP_WAIT_DOWN, OP_INC_UP, OP_DEC_UP, OP_WAIT_UP,
    /* the ends of short loops of + - . alone (see mark_spins): (++-)*N and
       the like, and the `]` of [-], [+-.] and the like */
    OP_INC_SPIN, OP_DEC_SPIN, OP_WAIT_SPIN, OP_LOOP2_SPIN,
    OP_DONE,
    /* free instructions: repeat bookkeeping, no cycle */
    OP_REP1,    /* `(` of a plain repeat: push counter, counter = count */
    OP_REP2,    /* `)` of a plain repeat: count down, loop while non-zero */
    OP_IREP1,   /* `(` of (A{B}C): as OP_REP1 */
    OP_INNER1,  /* `{`: as OP_REP2 (ends the copies of A) */
    OP_INNER2,  /* `}`: push counter, counter = 1 */
    OP_IREP2,   /* `)` of (A{B}C): count up, loop while <= count */
    N_OPS
};

#define IS_REAL(op) ((op) <= OP_DONE)

typedef bfj_error ParseErr;

typedef struct {
    uint8_t type;
    int32_t match; /* partner: [..] pairs, ( with its { or ), { with (, } with ) */
    int32_t inner; /* extra links of (A{B}C): ( <-> ), { <-> } */
    int32_t count;
    int32_t src;   /* byte offset in the source */
} POp;

typedef struct {
    POp *ops;
    ptrdiff_t len, cap;
} POpList;

static int pop_append(POpList *l, int type, ptrdiff_t src)
{
    if (l->len == l->cap) {
        ptrdiff_t cap = l->cap ? l->cap * 2 : 256;
        POp *ops = realloc(l->ops, (size_t)cap * sizeof *ops);
        if (!ops)
            return -1;
        l->ops = ops;
        l->cap = cap;
    }
    POp *op = &l->ops[l->len++];
    op->type = (uint8_t)type;
    op->match = op->inner = -1;
    op->count = -1;
    op->src = (int32_t)src;
    return 0;
}

static int is_command_char(int c)
{
    return strchr("+-<>.,[](){}*%0123456789", c) != NULL && c != 0;
}

/* Skip comment characters from *at; return the next command char or -1. */
static int next_command(const unsigned char *s, ptrdiff_t n, ptrdiff_t *at)
{
    while (*at < n && !is_command_char(s[*at]))
        (*at)++;
    return *at < n ? s[*at] : -1;
}

/*
 * Read the count after a `)` starting at *at.  As the established parser:
 * comments may stand between `)` and `*`/`%` and between that and the number;
 * a `-` right there is consumed and makes the count negative (= MAX_COUNT);
 * the digits follow with nothing in between.  No `*`/`%`: count 0, and
 * whatever was found is read normally.
 */
static int32_t read_count(const unsigned char *s, ptrdiff_t n, ptrdiff_t *at)
{
    ptrdiff_t i = *at;
    int c = next_command(s, n, &i);
    if (c != '*' && c != '%')
        return 0;
    i++;
    c = next_command(s, n, &i);
    int negative = 0;
    if (c == '-') {
        negative = 1;
        i++;
    }
    int32_t count = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        count = count * 10 + (s[i] - '0');
        i++;
        if (count > MAX_COUNT) {
            /* the remaining digits are comments */
            count = MAX_COUNT;
            break;
        }
    }
    *at = i;
    if (negative && count > 0)
        return MAX_COUNT;
    return count;
}

static int tokenize(const unsigned char *s, ptrdiff_t n, POpList *out)
{
    ptrdiff_t i = 0;
    while (i < n) {
        ptrdiff_t src = i;
        int type = -1;
        switch (s[i++]) {
        case '+': type = OP_INC; break;
        case '-': type = OP_DEC; break;
        case '<': type = OP_LEFT; break;
        case '>': type = OP_RIGHT; break;
        case '.': type = OP_WAIT; break;
        case '[': type = OP_LOOP1; break;
        case ']': type = OP_LOOP2; break;
        case '(': type = OP_REP1; break;
        case '{': type = OP_INNER1; break;
        case '}': type = OP_INNER2; break;
        case ')': {
            int32_t count = read_count(s, n, &i);
            if (pop_append(out, OP_REP2, src) < 0)
                return -1;
            out->ops[out->len - 1].count = count;
            continue;
        }
        default: continue; /* comments, `,`, stray digits, `*`, `%` */
        }
        if (pop_append(out, type, src) < 0)
            return -1;
    }
    return pop_append(out, OP_DONE, n);
}

#define FAIL(k, a, o) do { err->kind = (k); err->at = (a); err->other = (o); goto fail; } while (0)

/* Pair ( with ), and each { with its ( and its }. */
static int match_repeats(POpList *l, ParseErr *err)
{
    POp *ops = l->ops;
    int32_t *stack = malloc(sizeof(int32_t) * MAX_NEST);
    int32_t *brace_depth_stack = malloc(sizeof(int32_t) * MAX_NEST);
    int32_t *open_braces = malloc(sizeof(int32_t) * (MAX_NEST + 1));
    int depth = 0, brace_depth = 0, open_brace_count = 0;
    if (!stack || !brace_depth_stack || !open_braces)
        FAIL(BFJ_ERR_NO_MEMORY, 0, 0);

    for (int32_t at = 0; at < (int32_t)l->len; at++) {
        POp *op = &ops[at];
        switch (op->type) {
        case OP_REP1:
            if (depth == MAX_NEST)
                FAIL(BFJ_ERR_PAREN_TOO_DEEP, op->src, -1);
            stack[depth] = at;
            brace_depth_stack[depth] = brace_depth;
            depth++;
            brace_depth = 0;
            break;
        case OP_INNER1: {
            /* belongs to the innermost ( that has no { yet */
            brace_depth++;
            if (brace_depth > depth)
                FAIL(BFJ_ERR_BRACE_WITHOUT_PAREN, op->src, -1);
            POp *owner = &ops[stack[depth - brace_depth]];
            if (owner->match != -1)
                FAIL(BFJ_ERR_SECOND_BRACE, op->src, ops[owner->match].src);
            open_braces[open_brace_count++] = at;
            owner->type = OP_IREP1;
            owner->match = at;
            op->match = stack[depth - brace_depth];
            break;
        }
        case OP_INNER2: {
            if (!brace_depth)
                FAIL(BFJ_ERR_UNMATCHED_CLOSE_BRACE, op->src, -1);
            brace_depth--;
            int32_t open = open_braces[--open_brace_count];
            op->inner = open;
            ops[open].inner = at;
            break;
        }
        case OP_REP2: {
            if (!depth)
                FAIL(BFJ_ERR_UNMATCHED_CLOSE_PAREN, op->src, -1);
            if (brace_depth)
                FAIL(BFJ_ERR_UNCLOSED_BRACE, ops[open_braces[open_brace_count - 1]].src, op->src);
            depth--;
            int32_t open = stack[depth];
            POp *rep1 = &ops[open];
            rep1->count = op->count;
            if (rep1->type == OP_IREP1) {
                POp *inner1 = &ops[rep1->match];
                POp *inner2 = &ops[inner1->inner];
                op->type = OP_IREP2;
                op->inner = open;
                op->match = inner1->inner;
                rep1->inner = at;
                inner1->count = op->count;
                inner2->match = at;
                inner2->count = op->count;
            } else {
                op->match = open;
                rep1->match = at;
            }
            brace_depth = brace_depth_stack[depth];
            break;
        }
        default:
            break;
        }
    }
    if (depth)
        FAIL(BFJ_ERR_UNMATCHED_OPEN_PAREN, ops[stack[depth - 1]].src, -1);
    free(stack);
    free(brace_depth_stack);
    free(open_braces);
    return 0;
fail:
    free(stack);
    free(brace_depth_stack);
    free(open_braces);
    return -1;
}

/*
 * Pair [ with ].  Between them the repeat markers must balance: ( and {
 * open a level, ) and } close one; a loop may neither leave a level it
 * started in nor end inside one it opened.
 */
static int match_loops(POpList *l, ParseErr *err)
{
    POp *ops = l->ops;
    int32_t *stack = malloc(sizeof(int32_t) * MAX_NEST);
    int32_t *level_stack = malloc(sizeof(int32_t) * MAX_NEST);
    /* the abbreviation markers currently open, to name one in errors */
    int32_t *markers = malloc(sizeof(int32_t) * (2 * MAX_NEST + 2));
    int depth = 0, levels = 0, marker_count = 0;
    if (!stack || !level_stack || !markers)
        FAIL(BFJ_ERR_NO_MEMORY, 0, 0);

    for (int32_t at = 0; at < (int32_t)l->len; at++) {
        POp *op = &ops[at];
        switch (op->type) {
        case OP_LOOP1:
            if (depth == MAX_NEST)
                FAIL(BFJ_ERR_BRACKET_TOO_DEEP, op->src, -1);
            stack[depth] = at;
            level_stack[depth] = levels;
            depth++;
            levels = 0;
            break;
        case OP_REP1: case OP_IREP1: case OP_INNER1:
            levels++;
            markers[marker_count++] = at;
            break;
        case OP_REP2: case OP_IREP2: case OP_INNER2:
            if (depth && !levels)
                FAIL(BFJ_ERR_BRACKET_CROSSES_OUT, op->src, ops[stack[depth - 1]].src);
            if (levels)
                levels--;
            if (marker_count)
                marker_count--;
            break;
        case OP_LOOP2: {
            if (!depth)
                FAIL(BFJ_ERR_UNMATCHED_CLOSE_BRACKET, op->src, -1);
            if (levels)
                FAIL(BFJ_ERR_BRACKET_CROSSES_IN, op->src, ops[markers[marker_count - 1]].src);
            depth--;
            op->match = stack[depth];
            ops[op->match].match = at;
            levels = level_stack[depth];
            break;
        }
        default:
            break;
        }
    }
    if (depth)
        FAIL(BFJ_ERR_UNMATCHED_OPEN_BRACKET, ops[stack[depth - 1]].src, -1);
    free(stack);
    free(level_stack);
    free(markers);
    return 0;
fail:
    free(stack);
    free(level_stack);
    free(markers);
    return -1;
}

/* Drop repeats with count 0: all of a plain one, the A and C parts of
   (A{B}C)*0 (B stays).  Compacts the list and renumbers the links. */
static int drop_zero_repeats(POpList *l)
{
    ptrdiff_t n = l->len;
    POp *ops = l->ops;
    int32_t *delta = calloc((size_t)n + 1, sizeof *delta);
    int32_t *new_index = malloc((size_t)n * sizeof *new_index);
    if (!delta || !new_index) {
        free(delta);
        free(new_index);
        return -1;
    }
    for (ptrdiff_t at = 0; at < n; at++) {
        int t = ops[at].type;
        if ((t == OP_REP1 || t == OP_IREP1 || t == OP_INNER2) && ops[at].count == 0) {
            delta[at]++;
            delta[ops[at].match + 1]--;
        }
    }
    int32_t kept = 0, covered = 0;
    for (ptrdiff_t at = 0; at < n; at++) {
        covered += delta[at];
        new_index[at] = covered ? -1 : kept++;
    }
    for (ptrdiff_t at = 0; at < n; at++) {
        if (new_index[at] < 0)
            continue;
        POp op = ops[at];
        if (op.match >= 0)
            op.match = new_index[op.match];
        if (op.inner >= 0)
            op.inner = new_index[op.inner];
        ops[new_index[at]] = op;
    }
    l->len = kept;
    free(delta);
    free(new_index);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Compiled programs                                                        */

/*
 * A spin: a short loop of + - . alone, (P)*N or [P] with P at most SPIN_MAX
 * instructions, which neither moves nor reads anything but (for [P]) its
 * own cell.  Each instruction in one knows its place: `spin` holds the
 * loop's length in cycles (P, or P + 1 with the test of `]`; 0 outside
 * spins) and whether the loop tests its cell, `phase` the instruction's
 * place in it.
 */
#define SPIN_MAX 32
#define SPIN_PERIOD_MAX 256 /* two spins whose periods' multiple is longer: not worth it */
#define SPIN_TESTED 0x80
#define SPIN_LENGTH(spin) ((spin) & 0x3f)
#define SPIN_TESTS(spin) (((spin) & SPIN_TESTED) != 0)

typedef struct Insn {
    const struct Insn *jump; /* where to continue when a jump is taken */
    int32_t count;           /* repeat count */
    uint8_t op;
    uint8_t spin;            /* in a spin: its length, | SPIN_TESTED; else 0 */
    uint8_t phase;           /* in a spin: its place in the loop */
    int8_t delta;            /* in a spin: what it does to the cell, +1, -1, 0 */
} Insn;

struct bfj_program {
    Insn *code;
    int32_t len;
    int32_t stack_depth; /* repeat counters needed at run time */
    int32_t *src;        /* byte offset in the source of each instruction */
    /* For the period check: owner[i] is the instruction that pushed the
       innermost repeat counter live at i (-1: none); for a pushing
       instruction, the one that pushed the counter below it.  up_limit[p]
       is the count a (A{B}C) counter p counts up to in C (0: plain repeat). */
    int32_t *owner;
    int32_t *up_limit;
};

static int is_backjump(int op)
{
    return op == OP_REP2 || op == OP_INNER1 || op == OP_IREP2;
}

/* A repeat whose body holds no real instruction would spin without
   spending a cycle: run its body once (it does nothing anyway). */
static int run_empty_bodies_once(Insn *code, int32_t n, const POp *ops)
{
    int32_t *real_before = malloc(((size_t)n + 1) * sizeof *real_before);
    if (!real_before)
        return -1;
    real_before[0] = 0;
    for (int32_t i = 0; i < n; i++)
        real_before[i + 1] = real_before[i] + IS_REAL(ops[i].type);
    for (int32_t i = 0; i < n; i++) {
        Insn *in = &code[i];
        int32_t body = (int32_t)(in->jump - code);
        if (!is_backjump(in->op) || real_before[i] - real_before[body] > 0)
            continue;
        if (in->op == OP_IREP2)
            in->count = 1;
        else
            code[body - 1].count = 1;
    }
    free(real_before);
    return 0;
}

/* Static repeat nesting: who owns each live counter, and how deep it goes. */
static int find_owners(bfj_program *p, const POp *ops)
{
    int32_t n = p->len, depth = 0, max_depth = 0;
    int32_t *pushers = malloc(((size_t)n + 1) * sizeof *pushers);
    if (!pushers)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        int op = p->code[i].op;
        p->owner[i] = depth ? pushers[depth - 1] : -1;
        p->up_limit[i] = 0;
        if (op == OP_IREP1)
            p->up_limit[i] = p->code[ops[i].inner].count;
        else if (op == OP_INNER2)
            p->up_limit[i] = p->code[ops[i].match].count;
        if (op == OP_REP1 || op == OP_IREP1 || op == OP_INNER2)
            pushers[depth++] = i;
        else if (is_backjump(op))
            depth--;
        if (depth > max_depth)
            max_depth = depth;
    }
    /* a loop whose ends lie under different counter owners crosses from
       A into C of a (A{B}C): its taken jumps switch a counter's direction */
    for (int32_t i = 0; i < n; i++) {
        Insn *in = &p->code[i];
        if (in->op == OP_LOOP1 && p->owner[i] != p->owner[in->jump - 1 - p->code]) {
            in->op = OP_LOOP1X;
            p->code[in->jump - 1 - p->code].op = OP_LOOP2X;
        }
    }
    free(pushers);
    p->stack_depth = max_depth + 1;
    return 0;
}

/*
 * Superinstructions.  A repeat's end takes no cycle, so running it right
 * after the `+`, `-` or `.` before it, in the same dispatch, changes nothing
 * a program can see: the `)` stays in the code (a `[` may jump onto it) and
 * the fused instruction carries its jump target and count.  In the hill's
 * programs these pairs are a quarter of all dispatches.
 */
static void fuse_repeat_ends(Insn *code, int32_t n)
{
    for (int32_t i = 0; i + 1 < n; i++) {
        Insn *in = &code[i];
        const Insn *end = &code[i + 1];
        int arith = in->op == OP_INC ? 0 : in->op == OP_DEC ? 1 : in->op == OP_WAIT ? 2 : -1;
        if (arith < 0)
            continue;
        if (end->op == OP_REP2 || end->op == OP_INNER1)
            in->op = (uint8_t)(OP_INC_DOWN + arith);
        else if (end->op == OP_IREP2)
            in->op = (uint8_t)(OP_INC_UP + arith);
        else
            continue;
        in->jump = end->jump;
        in->count = end->count;
    }
}

static int arith_delta(int op)
{
    return op == OP_INC ? 1 : op == OP_DEC ? -1 : op == OP_WAIT ? 0 : 2;
}

/*
 * Spins: a repeat end (fused with the + - . before it) or a `]` whose loop
 * body, back to its jump target, is all plain + - . instructions.  Two
 * programs that both spin can be run many cycles ahead at once (see
 * run_spins); the right program's spin ends get opcodes of their own, which
 * look for that.
 */
static void mark_spins(Insn *code, int32_t n)
{
    for (int32_t end = 0; end < n; end++) {
        Insn *in = &code[end];
        int fused = in->op >= OP_INC_DOWN && in->op <= OP_WAIT_DOWN;
        if (!fused && in->op != OP_LOOP2)
            continue;
        int32_t head = (int32_t)(in->jump - code);
        if (head > end || end - head >= SPIN_MAX)
            continue;
        int32_t k = head;
        while (k < end && arith_delta(code[k].op) != 2)
            k++;
        if (k < end)
            continue;
        for (k = head; k <= end; k++) {
            code[k].spin = (uint8_t)((end - head + 1) | (fused ? 0 : SPIN_TESTED));
            code[k].phase = (uint8_t)(k - head);
            code[k].delta = (int8_t)(k < end ? arith_delta(code[k].op)
                                     : !fused ? 0
                                     : in->op == OP_INC_DOWN ? 1 : in->op == OP_DEC_DOWN ? -1 : 0);
        }
        if (fused)
            in->op = (uint8_t)(OP_INC_SPIN + (in->op - OP_INC_DOWN));
        else
            in->op = OP_LOOP2_SPIN;
    }
}

static int build_code(bfj_program *p, const POpList *l)
{
    int32_t n = (int32_t)l->len;
    const POp *ops = l->ops;
    p->code = malloc((size_t)n * sizeof *p->code);
    p->src = malloc((size_t)n * sizeof *p->src);
    p->owner = malloc((size_t)n * sizeof *p->owner);
    p->up_limit = malloc((size_t)n * sizeof *p->up_limit);
    if (!p->code || !p->src || !p->owner || !p->up_limit)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        const POp *op = &ops[i];
        Insn *in = &p->code[i];
        in->op = op->type;
        in->count = op->count;
        in->spin = in->phase = 0;
        in->delta = 0;
        /* jumps land just past the partner: `[` past `]`, `)` past `(` */
        in->jump = (op->type == OP_LOOP1 || op->type == OP_LOOP2 || is_backjump(op->type))
                       ? &p->code[op->match + 1] : NULL;
        p->src[i] = op->src;
    }
    p->len = n;
    if (run_empty_bodies_once(p->code, n, ops) < 0 || find_owners(p, ops) < 0)
        return -1;
    fuse_repeat_ends(p->code, n);
    mark_spins(p->code, n);
    return 0;
}

static int compile_source(bfj_program *p, const unsigned char *s, ptrdiff_t n, ParseErr *err)
{
    POpList l = {0};
    err->kind = BFJ_OK;
    err->other = -1;
    /* offsets and instruction counts are int32: a longer source cannot be
       told apart from a shorter one's offsets, so it is refused whole */
    if (n > BFJ_MAX_SOURCE) {
        err->kind = BFJ_ERR_SOURCE_TOO_LARGE;
        err->at = BFJ_MAX_SOURCE;
        return -1;
    }
    int ok = tokenize(s, n, &l) == 0 && (l.len < INT32_MAX / 2);
    if (!ok)
        err->kind = BFJ_ERR_NO_MEMORY;
    else if (match_repeats(&l, err) < 0 || match_loops(&l, err) < 0)
        ok = 0;
    else if (drop_zero_repeats(&l) < 0 || build_code(p, &l) < 0) {
        err->kind = BFJ_ERR_NO_MEMORY;
        ok = 0;
    }
    free(l.ops);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Battles                                                                  */

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef struct {
    int32_t ip, ptr, rep; /* rep: the innermost live repeat counter */
    int32_t sp;
    int32_t *stack;       /* the counters below it: stack[0..sp) */
    uint32_t crossings;   /* OP_LOOP1X/OP_LOOP2X jumps taken */
    int32_t low;          /* the lowest sp since the snapshot: the counters
                             below it lived through (see repeat_of) */
} ProgState;

/*
 * Battle statistics (hill/engine documents them; docs/analytics.md defines
 * them), counted when a joust asks for them, indexed by cell as the battle's
 * tape has them (the shared battle's wide tape: see record_battle).  Heat is
 * counted lazily: a program's pointer stays on its cell from cycle mark on,
 * and the cycles since are added when it moves, when the state is copied
 * (settle_heat) and when the battle ends, so the cycles the engine jumps
 * over with no move count too, at no cost.
 */
typedef struct {
    int32_t heat[2][WIDE_TAPE];  /* cycles at whose end the pointer stood there */
    uint8_t decoy[2][WIDE_TAPE]; /* the largest |value| it left the cell at */
    int32_t mark[2];             /* heat is counted up to the end of this cycle */
} Stats;

typedef struct {
    int32_t len;          /* tape length (before the tape: a pointer one cell
                             below it still points into the struct) */
    uint8_t tape[WIDE_TAPE];
    int32_t cycle;        /* cycles done */
    /* consecutive end-of-cycle zero flags; FELL (and more) when it fell off */
    int32_t deaths_a, deaths_b;
    int kettle;
    /* Highest cell the left program has stood on, lowest for the right one.
       Real battles start with them at the tape ends, so passing them means
       falling off; in the shared battle it means the programs drew closer. */
    int32_t hi_a, lo_b;
    ProgState a, b;
    int32_t decided_at; /* the game's length: the cycle limit for a tie found early */
    Stats *stats;       /* NULL unless the joust counts statistics */
} Battle;

#define FELL 4 /* a fall: the zero-flag count is 2 at most, so the two never mix */


typedef struct {
    int32_t *ip_a, *ip_b;   /* instruction each program runs in cycle k+1 */
    int8_t *ptr_a, *ptr_b;  /* pointers after k cycles */
    uint8_t *tape;          /* tape after k cycles, len bytes each */
} TraceBuf;

/* run_battle's result besides +1 (left wins), 0 (tie), -1 (right wins):
   the shared battle handed every tape length over to real battles. */
#define RUN_FORKED 2
#define FIRST_SNAPSHOT 32

typedef struct {
    const bfj_program *left, *right;
    int32_t max_cycles;
    int next_len;               /* shortest tape length not yet forked */
    int8_t outcome[N_BATTLES];  /* sieve 10..30, kettle 10..30 */
    long long cycles;           /* battle-cycles simulated, for benchmarks */
    long long game_cycles;      /* the 42 games' lengths added up */
    Battle fork, fork_snapshot, shared_snapshot;
    bfj_stats *stats;         /* the battles' statistics, or NULL: not counted */
} Joust;

static void copy_battle(Battle *to, const Battle *from)
{
    int32_t *stack_a = to->a.stack, *stack_b = to->b.stack;
    Stats *stats = to->stats;
    *to = *from;
    to->a.stack = stack_a;
    to->b.stack = stack_b;
    to->stats = stats;
    if (stats)
        *stats = *from->stats;
    memcpy(stack_a, from->a.stack, (size_t)from->a.sp * sizeof *stack_a);
    memcpy(stack_b, from->b.stack, (size_t)from->b.sp * sizeof *stack_b);
}

/* ------------------------------------------------------------------------ */
/* Repeated states                                                          */

/*
 * Repeated states.  Programs that neither win nor lose mostly settle into a
 * loop: the whole state comes back after some P cycles, except repeat
 * counters that move on by the same amount every time.  The engine keeps a
 * snapshot of the battle (taken at doubling intervals: Brent's method) and,
 * when the state now equals it but for counters, either proves a tie or
 * jumps ahead by whole periods.
 *
 * Why this is exact: the battle is deterministic, and a counter is read only
 * by its own repeat end, which compares it with 0 (counting down) or with
 * the repeat's count (counting up, in the C part of (A{B}C)).  If at the
 * snapshot (cycle s) and now (t = s + P) the state is the same but for some
 * counters, and each of those took the same branch at every comparison
 * whatever its exact value, the cycles from t repeat those from s, with each
 * such counter moved on by d = (now - then) per period.  Two ways to know
 * that a counter cannot reach an end during a period that starts it at c:
 *
 * - It lived through the period (the stack never dropped below it: `low`)
 *   and moved one way only: down in (P)*N and in A, up in C (no loop from A
 *   into C of (A{B}C) jumped: `crossings` unchanged).  Then its values in
 *   the period run from c to c + d, and the next period starts at c + d: the
 *   repeats go on while that stays within the repeat's range (>= 1 counting
 *   down, <= the count counting up).
 * - It moves one step per cycle at most (every repeat body holds a real
 *   instruction): if c is more than P + 1 steps away from the ends it can
 *   move towards, it reaches none of them in P cycles.  (This also shows it
 *   lived through the period.)  A counter whose loop may have crossed may
 *   move either way.
 */
typedef struct {
    int32_t limit;   /* the count it moves up to (0: it only moves down) */
    int up, down;    /* the ways it may move */
} CounterWays;

static CounterWays counter_ways(const bfj_program *p, int32_t owner, int monotone)
{
    CounterWays w = {.limit = p->up_limit[owner]};
    int counting_up = w.limit && p->code[owner].op == OP_INNER2;
    w.up = w.limit && (counting_up || !monotone);
    w.down = !counting_up || !monotone;
    return w;
}

/* No end within `cycles` cycles of `value`. */
static int counter_is_far(CounterWays w, int64_t value, int64_t cycles)
{
    return (!w.down || value > cycles + 1) && (!w.up || w.limit - value > cycles + 1);
}

/*
 * How many more periods a counter allows (u now, v at the snapshot, d =
 * u - v): periods that start it at u, u + d, ..., u + (K - 1) d.  Returns -1
 * if none, INT64_MAX if any number.
 */
static int64_t periods_allowed(CounterWays w, int32_t u, int32_t v, int32_t period,
                               int lived, int monotone)
{
    int64_t d = (int64_t)u - v;
    if (lived && monotone) {
        /* its values stay within the range while the next start does */
        if (w.down && d < 0)
            return (u - 1) / -d;
        if (w.up && d > 0)
            return (w.limit - u) / d;
        return -1; /* cannot happen: it moved the way it may move */
    }
    /* one step per cycle at most: every start must be far over a period */
    if (!counter_is_far(w, v, period) || !counter_is_far(w, u, period))
        return -1;
    int64_t k = INT64_MAX;
    if (w.down && d < 0)
        k = (u - period - 2) / -d + 1;
    if (w.up && d > 0) {
        int64_t up = (w.limit - u - period - 2) / d + 1;
        k = up < k ? up : k;
    }
    return k;
}

/* The value of counter level k (0 outermost; level sp is `rep`). */
static int32_t *counter_at(ProgState *s, int32_t k)
{
    return k == s->sp ? &s->rep : &s->stack[k];
}

/*
 * One program's counters now and at the snapshot.  Clears *far unless every
 * counter that differs is far until the cycle limit (in both states: a tie,
 * by the second argument above), and lowers *periods to what the differing
 * counters allow.
 */
static void compare_counters(const bfj_program *p, ProgState *now, ProgState *then,
                             int32_t now_left, int32_t then_left, int *far, int64_t *periods)
{
    int monotone = now->crossings == then->crossings;
    int32_t period = then_left - now_left;
    int32_t owner = p->owner[now->ip];
    /* level 0 is below every push (the 0 a battle starts with): no owner, so
       the walk up the owners stops at -1 instead of reading owner[-1] */
    for (int32_t k = now->sp; k >= 0; k--, owner = owner >= 0 ? p->owner[owner] : -1) {
        int32_t u = *counter_at(now, k), v = *counter_at(then, k);
        if (u == v)
            continue;
        /* a live counter always has an owner: the instruction that pushed it */
        CounterWays w = counter_ways(p, owner, monotone);
        if (!counter_is_far(w, u, now_left) || !counter_is_far(w, v, then_left))
            *far = 0;
        int64_t allowed = periods_allowed(w, u, v, period, now->low >= k, monotone);
        if (allowed < *periods)
            *periods = allowed;
    }
}

enum { NO_REPEAT, REPEAT_TIE, REPEAT_SKIP };

/*
 * Is the battle now where it was at the snapshot, but for counters?  Then
 * either it is a tie (REPEAT_TIE: it goes round the same loop until the
 * cycle limit, and nothing was decided during the loop) or it may jump
 * ahead by *periods whole periods (REPEAT_SKIP).
 */
static int repeat_of(Battle *now, Battle *then, const Joust *j, int64_t *periods)
{
    if (now->a.ip != then->a.ip || now->b.ip != then->b.ip || now->a.ptr != then->a.ptr ||
        now->b.ptr != then->b.ptr || now->deaths_a != then->deaths_a ||
        now->deaths_b != then->deaths_b || now->hi_a != then->hi_a || now->lo_b != then->lo_b ||
        now->a.sp != then->a.sp || now->b.sp != then->b.sp ||
        memcmp(now->tape, then->tape, (size_t)now->len) != 0)
        return NO_REPEAT;
    int32_t now_left = j->max_cycles - now->cycle, then_left = j->max_cycles - then->cycle;
    int32_t period = then_left - now_left;
    int far = 1;
    int64_t allowed = INT64_MAX;
    compare_counters(j->left, &now->a, &then->a, now_left, then_left, &far, &allowed);
    compare_counters(j->right, &now->b, &then->b, now_left, then_left, &far, &allowed);
    /* the periods that start before the limit, the last one perhaps cut short */
    if (far || allowed >= (now_left + period - 1) / period)
        return REPEAT_TIE;
    *periods = allowed < now_left / period ? allowed : now_left / period;
    return *periods >= 1 ? REPEAT_SKIP : NO_REPEAT;
}

/* Jump ahead by `periods` periods: the differing counters move on. */
static void skip_periods(Battle *now, Battle *then, int64_t periods)
{
    ProgState *states[2][2] = {{&now->a, &then->a}, {&now->b, &then->b}};
    for (int side = 0; side < 2; side++) {
        ProgState *u = states[side][0], *v = states[side][1];
        for (int32_t k = 0; k <= u->sp; k++) {
            int32_t *value = counter_at(u, k);
            *value += (int32_t)(periods * (*value - *counter_at(v, k)));
        }
    }
    now->cycle += (int32_t)(periods * (now->cycle - then->cycle));
}

/* The free instructions, on a program's instruction pointer, innermost
   counter and counter stack pointer. */
#define REP_PUSH(ip, rep, sp, value) (*(sp)++ = (rep), (rep) = (value), (ip)++)
#define POP(rep, sp, low) ((rep) = *--(sp), (low) = (sp) < (low) ? (sp) : (low))
#define REP_DOWN(ip, rep, sp, low) (--(rep) ? ((ip) = (ip)->jump) : (POP(rep, sp, low), (ip)++))
#define REP_UP(ip, rep, sp, low) \
    (++(rep) <= (ip)->count ? ((ip) = (ip)->jump) : (POP(rep, sp, low), (ip)++))

/* The same, fused with the instruction before the repeat end (ip): on
   leaving the repeat, go past the end. */
#define FUSED_DOWN(ip, rep, sp, low) \
    (--(rep) ? ((ip) = (ip)->jump) : (POP(rep, sp, low), (ip) += 2))
#define FUSED_UP(ip, rep, sp, low) \
    (++(rep) <= (ip)->count ? ((ip) = (ip)->jump) : (POP(rep, sp, low), (ip) += 2))

/* Run free instructions until a real one is next (repeat bookkeeping reads
   no tape, so running it early changes nothing). */
#define SETTLE(ip, rep, sp, low)                                              \
    for (;;) {                                                                \
        switch ((ip)->op) {                                                   \
        case OP_REP1: case OP_IREP1: REP_PUSH(ip, rep, sp, (ip)->count); continue; \
        case OP_REP2: case OP_INNER1: REP_DOWN(ip, rep, sp, low); continue;   \
        case OP_INNER2: REP_PUSH(ip, rep, sp, 1); continue;                   \
        case OP_IREP2: REP_UP(ip, rep, sp, low); continue;                    \
        }                                                                     \
        break;                                                                \
    }

static int fork_battles(Joust *j, const Battle *shared);

/* Count the heat of the cycles since the marks, up to the end of `cycle`
   (a pointer off the tape has none left to count). */
static void settle_heat(Battle *bt, int32_t cycle)
{
    Stats *st = bt->stats;
    int32_t ptr[2] = {bt->a.ptr, bt->b.ptr};
    for (int p = 0; p < 2; p++) {
        if (ptr[p] >= 0 && ptr[p] < bt->len)
            st->heat[p][ptr[p]] += cycle - st->mark[p];
        st->mark[p] = cycle;
    }
}

/* After skip_periods: the periods jumped over heat as the one seen did
   (their moves leave the same values: no decoy changes). */
static void skip_heat(Battle *now, const Battle *then, int64_t periods)
{
    for (int p = 0; p < 2; p++)
        for (int c = 0; c < now->len; c++)
            now->stats->heat[p][c] +=
                (int32_t)(periods * (now->stats->heat[p][c] - then->stats->heat[p][c]));
    now->stats->mark[0] = now->stats->mark[1] = now->cycle;
}

/* ------------------------------------------------------------------------ */
/* Spinning together                                                        */

/*
 * Spinning together.  When both programs spin (see mark_spins), neither
 * pointer moves and each loop changes its cell by the same steps in every
 * turn, so over a common period of L cycles (L the least common multiple of
 * the two loops' lengths) each cell changes by the same steps every time,
 * and the state after any number of whole periods follows by arithmetic, as
 * long as nothing the loops or the rules test changes its answer: a counter
 * runs out, a tested cell becomes zero, a flag falls to zero.  run_spins
 * finds how many periods surely pass without any of these and applies them
 * at once.
 *
 * Exact because the values a cell (one, if both pointers are on it) holds at
 * the ends of the cycles form L progressions v + S_r + j D (S_r the change
 * over the first r cycles of the period, D over the whole period); the
 * engine keeps every one of those it passes nonzero, and v too, wherever a
 * loop tests the cell or the cell is a flag.  A test reads its cell as it
 * was at the start of its cycle, v or one of those values, so every test
 * goes on as in the first period; the flags never become zero, so no count
 * of zero flags starts; each repeat keeps at least one turn, so none ends.
 */
#define SPIN_MIN 4 /* fewer cycles ahead than this: not worth the arithmetic */

/* Solving v + j d = 0 (mod 256) for the least j >= 1, for one d and many v:
   d = 2^k odd, so v needs the factor 2^k, and then j = -(v / 2^k) / odd
   modulo 2^(8-k) (an odd number has an inverse modulo a power of two). */
typedef struct {
    unsigned d, shift, low_bits, mask, inverse;
} ZeroSolver;

static ZeroSolver zero_solver(int d)
{
    ZeroSolver z = {.d = (unsigned)d & 255};
    if (z.d) {
        z.shift = (unsigned)__builtin_ctz(z.d);
        z.low_bits = (1u << z.shift) - 1;
        z.mask = (256u >> z.shift) - 1;
        unsigned odd = z.d >> z.shift;
        z.inverse = odd; /* odd * odd = 1 (mod 8); each Newton step doubles the bits */
        z.inverse *= 2 - odd * z.inverse;
        z.inverse *= 2 - odd * z.inverse;
    }
    return z;
}

/* The least j >= 1 with v + j d = 0 (mod 256), or INT32_MAX if none. */
static inline int32_t first_zero(const ZeroSolver *z, unsigned v)
{
    v &= 255;
    if (!z->d)
        return v ? INT32_MAX : 1;
    if (v & z->low_bits)
        return INT32_MAX;
    unsigned j = ((0u - (v >> z->shift)) * z->inverse) & z->mask;
    return j ? (int32_t)j : (int32_t)(z->mask + 1);
}

/* Whole periods a cell allows (at most m): its values v + S_r + j D stay
   nonzero if they must (steps: its change in each cycle of the period). */
static int32_t cell_periods(uint8_t v, const int *steps, int period, int d, int checked, int32_t m)
{
    if (!checked)
        return m;
    if (!v)
        return 0;
    ZeroSolver z = zero_solver(d);
    int32_t clear = first_zero(&z, v) - 1; /* v + j D, j = 1..m */
    m = clear < m ? clear : m;
    int u = v;
    for (int r = 1; r < period && m > 0; r++) {
        /* v + S_r + j D, j = 0..m-1 */
        u += steps[r - 1];
        clear = (u & 255) ? first_zero(&z, (unsigned)u) : 0;
        m = clear < m ? clear : m;
    }
    return m;
}

/* Cycles left before a repeat runs out, keeping a turn for the real thing. */
static int32_t spin_room(const Insn *ip, int32_t rep)
{
    return SPIN_TESTS(ip->spin) ? INT32_MAX : (rep - 1) * SPIN_LENGTH(ip->spin);
}

static int lcm(int a, int b)
{
    int m = a;
    while (m % b)
        m += a;
    return m;
}

static int32_t run_spins(const Insn *ia, uint8_t *pa, int32_t *rep_a, const Insn *ib, uint8_t *pb,
                         int32_t *rep_b, int kettle, const uint8_t *tape, const uint8_t *flag_b,
                         int32_t most)
{
    int la = SPIN_LENGTH(ia->spin), lb = SPIN_LENGTH(ib->spin);
    /* whole periods before a repeat runs out or the checkpoint comes */
    int32_t room_a = spin_room(ia, *rep_a), room_b = spin_room(ib, *rep_b);
    int32_t room = room_a < room_b ? room_a : room_b;
    room = room < most ? room : most;
    if (room < SPIN_MIN)
        return 0;
    int period = la == lb ? la : lb == 1 ? la : la == 1 ? lb : lcm(la, lb);
    if (period > SPIN_PERIOD_MAX)
        return 0;
    int32_t periods = period == 1 ? room : room / period;
    /* what each program does to its cell in each cycle of the period, from
       its place now; on one cell, both */
    int same = pa == pb, sign_b = kettle ? -1 : 1;
    int steps_a[SPIN_PERIOD_MAX], steps_b[SPIN_PERIOD_MAX], da = 0, db = 0;
    const Insn *head_a = ia - ia->phase, *head_b = ib - ib->phase;
    for (int t = 0, at_a = ia->phase, at_b = ib->phase; t < period; t++) {
        int x = head_a[at_a].delta, y = sign_b * head_b[at_b].delta;
        at_a = at_a + 1 == la ? 0 : at_a + 1;
        at_b = at_b + 1 == lb ? 0 : at_b + 1;
        da += x;
        db += y;
        steps_a[t] = same ? x + y : x;
        steps_b[t] = y;
    }
    if (same) {
        da += db;
        db = 0;
    }
    int tests_a = SPIN_TESTS(ia->spin), tests_b = SPIN_TESTS(ib->spin);
    periods = cell_periods(*pa, steps_a, period, da,
                           tests_a || (same && tests_b) || pa == tape || pa == flag_b, periods);
    if (!same)
        periods = cell_periods(*pb, steps_b, period, db, tests_b || pb == tape || pb == flag_b,
                               periods);
    int32_t cycles = periods * period;
    if (cycles < SPIN_MIN)
        return 0;
    *pa = (uint8_t)(*pa + periods * da);
    if (!same)
        *pb = (uint8_t)(*pb + periods * db);
    if (!SPIN_TESTS(ia->spin))
        *rep_a -= periods * (period / la);
    if (!SPIN_TESTS(ib->spin))
        *rep_b -= periods * (period / lb);
    return cycles;
}

/* ------------------------------------------------------------------------ */
/* The interpreter                                                          */

/*
 * The interpreter.  Each cycle the left program runs one real instruction,
 * then the right one; the right one's loop tests read the cell as it was
 * before the left one acted, so both see the tape of the start of the cycle.
 * Falling off the tape counts as a dead flag (deaths = FELL), decided at
 * the end of the cycle like the flags.  The common path is one indirect jump
 * per instruction; everything rare (trace, cycle limit, snapshots, forks)
 * waits for the checkpoint at `stop_at`.  `snapshot` is NULL for a traced
 * battle: a trace shows every cycle, with no shortcut.  With statistics on
 * (bt->stats), a move also counts the heat and the decoy of the cell left.
 */
static int run_battle(Battle *bt, Joust *j, Battle *snapshot, TraceBuf *trace)
{
#define COMMON_OPS(side) [OP_WAIT] = &&side##_wait, [OP_LOOP1] = &&side##_loop1, \
    [OP_WAIT_DOWN] = &&side##_wait_down, [OP_WAIT_UP] = &&side##_wait_up,         \
    [OP_WAIT_SPIN] = &&side##_wait_spin, [OP_LOOP2_SPIN] = &&side##_loop2_spin,   \
    [OP_LOOP2] = &&side##_loop2, [OP_LOOP1X] = &&side##_loop1x,                   \
    [OP_LOOP2X] = &&side##_loop2x, [OP_REP1] = &&side##_rep1,                     \
    [OP_IREP1] = &&side##_rep1, [OP_REP2] = &&side##_rep2,                        \
    [OP_INNER1] = &&side##_rep2, [OP_INNER2] = &&side##_inner2,                   \
    [OP_IREP2] = &&side##_irep2, [OP_LEFT] = &&side##_left, [OP_RIGHT] = &&side##_right
    static void *const ops_a[N_OPS] = {
        [OP_INC] = &&a_inc, [OP_DEC] = &&a_dec, [OP_DONE] = &&a_done, COMMON_OPS(a),
        [OP_INC_DOWN] = &&a_inc_down, [OP_DEC_DOWN] = &&a_dec_down,
        [OP_INC_UP] = &&a_inc_up, [OP_DEC_UP] = &&a_dec_up,
        /* the left program spins as any other: the right one looks for it */
        [OP_INC_SPIN] = &&a_inc_down, [OP_DEC_SPIN] = &&a_dec_down,
    };
    static void *const ops_b_sieve[N_OPS] = {
        [OP_INC] = &&b_inc, [OP_DEC] = &&b_dec, [OP_DONE] = &&end_cycle, COMMON_OPS(b),
        [OP_INC_DOWN] = &&b_inc_down, [OP_DEC_DOWN] = &&b_dec_down,
        [OP_INC_UP] = &&b_inc_up, [OP_DEC_UP] = &&b_dec_up,
        [OP_INC_SPIN] = &&b_inc_spin, [OP_DEC_SPIN] = &&b_dec_spin,
    };
    /* kettle: the right program's + and - swapped */
    static void *const ops_b_kettle[N_OPS] = {
        [OP_INC] = &&b_dec, [OP_DEC] = &&b_inc, [OP_DONE] = &&end_cycle, COMMON_OPS(b),
        [OP_INC_DOWN] = &&b_dec_down, [OP_DEC_DOWN] = &&b_inc_down,
        [OP_INC_UP] = &&b_dec_up, [OP_DEC_UP] = &&b_inc_up,
        [OP_INC_SPIN] = &&b_dec_spin, [OP_DEC_SPIN] = &&b_inc_spin,
    };
#undef COMMON_OPS
    void *const *const ops_b = bt->kettle ? ops_b_kettle : ops_b_sieve;
    const Insn *const code_a = j->left->code, *const code_b = j->right->code;
    uint8_t *const tape = bt->tape;
    const int32_t len = bt->len, max_cycles = j->max_cycles;
    uint8_t *const flag_b = tape + len - 1, *const end = tape + len;
    const int shared = trace == NULL && len == WIDE_TAPE;
    const int32_t first_cycle = bt->cycle;

    /* the state, in locals so that it lives in registers */
    const Insn *ia = code_a + bt->a.ip, *ib = code_b + bt->b.ip;
    uint8_t *pa = tape + bt->a.ptr, *pb = tape + bt->b.ptr;
    int32_t rep_a = bt->a.rep, rep_b = bt->b.rep;
    int32_t *sa = bt->a.stack + bt->a.sp, *sb = bt->b.stack + bt->b.sp;
    int32_t *low_a = sa, *low_b = sb;
    uint8_t *hi_a = tape + bt->hi_a, *lo_b = tape + bt->lo_b;
    int32_t deaths_a = bt->deaths_a, deaths_b = bt->deaths_b, cycle = bt->cycle;
    int alarm = deaths_a | deaths_b; /* a count of zero flags runs, or a fall */
    int32_t stop_at; /* the next checkpoint is at the end of cycle stop_at */
    int32_t budget;  /* cycles before it (kept in one register instead of two) */
    int result, tie_found = 0, decided = 0;
    int32_t skipped = 0; /* cycles jumped over, not simulated */
    int32_t spun = 0;    /* cycles both programs spun through at once */
    uint8_t b_cell;
    Stats *const stats = bt->stats;

    const Insn *snap_ia = NULL, *snap_ib = NULL; /* no snapshot taken yet */
    const uint8_t *snap_pa = NULL, *snap_pb = NULL;
    int32_t snap_interval = FIRST_SNAPSHOT;
    int32_t next_snapshot = snapshot ? cycle + snap_interval : INT32_MAX;

#define CYCLE() (stop_at - budget)
/* Statistics, when counted: program p leaves the cell under ptr (in the
   cycle after CYCLE(): its heat so far is counted, its value is a decoy). */
#define LEAVE(p, ptr) do {                                                    \
        if (unlikely(stats != NULL)) {                                          \
            int32_t c_ = (int32_t)((ptr) - tape), now_ = CYCLE();               \
            uint8_t v_ = *(ptr), abs_ = v_ < 128 ? v_ : (uint8_t)(256 - v_);    \
            stats->heat[p][c_] += now_ - stats->mark[p];                        \
            stats->mark[p] = now_;                                              \
            if (abs_ > stats->decoy[p][c_])                                     \
                stats->decoy[p][c_] = abs_;                                     \
        }                                                                       \
    } while (0)
#define SAVE() do {                                                           \
        bt->a.ip = (int32_t)(ia - code_a); bt->b.ip = (int32_t)(ib - code_b);   \
        bt->a.ptr = (int32_t)(pa - tape); bt->b.ptr = (int32_t)(pb - tape);     \
        bt->a.rep = rep_a; bt->b.rep = rep_b;                                   \
        bt->a.sp = (int32_t)(sa - bt->a.stack);                                 \
        bt->b.sp = (int32_t)(sb - bt->b.stack);                                 \
        bt->a.low = (int32_t)(low_a - bt->a.stack);                             \
        bt->b.low = (int32_t)(low_b - bt->b.stack);                             \
        bt->hi_a = (int32_t)(hi_a - tape); bt->lo_b = (int32_t)(lo_b - tape);   \
        bt->cycle = CYCLE();                                                    \
        bt->deaths_a = deaths_a; bt->deaths_b = deaths_b;                       \
    } while (0)
#define RECORD_NEXT_INSTRUCTIONS() do {                                       \
        SETTLE(ia, rep_a, sa, low_a);                                           \
        SETTLE(ib, rep_b, sb, low_b);                                           \
        trace->ip_a[cycle] = ia->op == OP_DONE ? -1 : (int32_t)(ia - code_a);   \
        trace->ip_b[cycle] = ib->op == OP_DONE ? -1 : (int32_t)(ib - code_b);   \
    } while (0)
#define RECORD_STATE() do {                                                   \
        trace->ptr_a[cycle] = (int8_t)(pa - tape);                              \
        trace->ptr_b[cycle] = (int8_t)(pb - tape);                              \
        memcpy(trace->tape + (size_t)cycle * len, tape, (size_t)len);           \
    } while (0)

    if (trace)
        RECORD_NEXT_INSTRUCTIONS();
set_stop:
    stop_at = trace ? cycle + 1 : (next_snapshot < max_cycles ? next_snapshot : max_cycles);
    budget = stop_at - cycle;
cycle_start:
    b_cell = *pb;
    goto *ops_a[ia->op];

    /* the left program */
a_inc: (*pa)++; ia++; goto *ops_b[ib->op];
a_dec: (*pa)--; ia++; goto *ops_b[ib->op];
a_left:
    LEAVE(0, pa);
    if (unlikely(--pa < tape))
        deaths_a = alarm = FELL;
    ia++;
    goto *ops_b[ib->op];
a_right:
    LEAVE(0, pa);
    if (unlikely(++pa > hi_a)) {
        if (pa == end)
            deaths_a = alarm = FELL;
        else {
            hi_a = pa;
            stop_at -= budget - 1; /* shared battle: see whether to fork */
            budget = 1;
        }
    }
    ia++;
    goto *ops_b[ib->op];
a_wait: ia++; goto *ops_b[ib->op];
a_loop1: ia = *pa ? ia + 1 : ia->jump; goto *ops_b[ib->op];
a_loop2: ia = *pa ? ia->jump : ia + 1; goto *ops_b[ib->op];
a_loop1x:
    if (*pa) ia++; else { ia = ia->jump; bt->a.crossings++; }
    goto *ops_b[ib->op];
a_loop2x:
    if (*pa) { ia = ia->jump; bt->a.crossings++; } else ia++;
    goto *ops_b[ib->op];
a_done: goto *ops_b[ib->op];
a_inc_down: (*pa)++; FUSED_DOWN(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_dec_down: (*pa)--; FUSED_DOWN(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_wait_down: FUSED_DOWN(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_inc_up: (*pa)++; FUSED_UP(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_dec_up: (*pa)--; FUSED_UP(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_wait_up: FUSED_UP(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_wait_spin: FUSED_DOWN(ia, rep_a, sa, low_a); goto *ops_b[ib->op];
a_loop2_spin: ia = *pa ? ia->jump : ia + 1; goto *ops_b[ib->op];
a_rep1: REP_PUSH(ia, rep_a, sa, ia->count); goto *ops_a[ia->op];
a_rep2: REP_DOWN(ia, rep_a, sa, low_a); goto *ops_a[ia->op];
a_inner2: REP_PUSH(ia, rep_a, sa, 1); goto *ops_a[ia->op];
a_irep2: REP_UP(ia, rep_a, sa, low_a); goto *ops_a[ia->op];

    /* the right program: its `<` goes towards higher cells, `>` lower */
b_inc: (*pb)++; ib++; goto end_cycle;
b_dec: (*pb)--; ib++; goto end_cycle;
b_left:
    LEAVE(1, pb);
    if (unlikely(++pb > flag_b))
        deaths_b = alarm = FELL;
    ib++;
    goto end_cycle;
b_right:
    LEAVE(1, pb);
    if (unlikely(--pb < lo_b)) {
        if (pb < tape)
            deaths_b = alarm = FELL;
        else {
            lo_b = pb;
            stop_at -= budget - 1;
            budget = 1;
        }
    }
    ib++;
    goto end_cycle;
b_wait: ib++; goto end_cycle;
b_loop1: ib = b_cell ? ib + 1 : ib->jump; goto end_cycle;
b_loop2: ib = b_cell ? ib->jump : ib + 1; goto end_cycle;
b_loop1x:
    if (b_cell) ib++; else { ib = ib->jump; bt->b.crossings++; }
    goto end_cycle;
b_loop2x:
    if (b_cell) { ib = ib->jump; bt->b.crossings++; } else ib++;
    goto end_cycle;
b_inc_down: (*pb)++; FUSED_DOWN(ib, rep_b, sb, low_b); goto end_cycle;
b_dec_down: (*pb)--; FUSED_DOWN(ib, rep_b, sb, low_b); goto end_cycle;
b_wait_down: FUSED_DOWN(ib, rep_b, sb, low_b); goto end_cycle;
b_inc_up: (*pb)++; FUSED_UP(ib, rep_b, sb, low_b); goto end_cycle;
b_dec_up: (*pb)--; FUSED_UP(ib, rep_b, sb, low_b); goto end_cycle;
b_wait_up: FUSED_UP(ib, rep_b, sb, low_b); goto end_cycle;
    /* the end of a spin: does the left program spin too? */
b_inc_spin: (*pb)++; goto b_spin;
b_dec_spin: (*pb)--; goto b_spin;
b_wait_spin:
b_spin:
    if (likely(--rep_b)) {
        ib = ib->jump;
        if (unlikely(ia->spin))
            goto both_spin;
    } else {
        POP(rep_b, sb, low_b);
        ib += 2;
    }
    goto end_cycle;
b_loop2_spin:
    if (b_cell) {
        ib = ib->jump;
        if (unlikely(ia->spin))
            goto both_spin;
    } else
        ib++;
    goto end_cycle;

    /* Both programs spin: run them ahead together (see run_spins), then
       finish the cycle.  The flags must stand, with no count running. */
both_spin:
    if (likely(tape[0] && *flag_b && !alarm) && budget > SPIN_MIN) {
        /* (copies: a counter whose address is taken would leave its register) */
        int32_t counters[2] = {rep_a, rep_b};
        int32_t ahead = run_spins(ia, pa, &counters[0], ib, pb, &counters[1], bt->kettle, tape,
                                  flag_b, budget - 1);
        rep_a = counters[0];
        rep_b = counters[1];
        budget -= ahead;
        spun += ahead;
    }
    goto end_cycle;
b_rep1: REP_PUSH(ib, rep_b, sb, ib->count); goto *ops_b[ib->op];
b_rep2: REP_DOWN(ib, rep_b, sb, low_b); goto *ops_b[ib->op];
b_inner2: REP_PUSH(ib, rep_b, sb, 1); goto *ops_b[ib->op];
b_irep2: REP_UP(ib, rep_b, sb, low_b); goto *ops_b[ib->op];

end_cycle:
    budget--;
    /* The flags: while both stand and no count of zero flags is running,
       there is nothing to count (the counts are 0 and stay 0). */
    if (unlikely(!tape[0]) || unlikely(!*flag_b) || unlikely(alarm)) {
        /* a zero flag twice in a row loses; a fall stays */
        deaths_a = tape[0] ? (deaths_a & FELL) : deaths_a + 1;
        deaths_b = *flag_b ? (deaths_b & FELL) : deaths_b + 1;
        alarm = deaths_a | deaths_b;
        if (unlikely(alarm >= 2)) {
            result = deaths_a >= 2 ? (deaths_b >= 2 ? 0 : -1) : 1;
            decided = 1;
            goto done;
        }
    }
    /* Ties: a candidate is the snapshot's instructions and pointers again;
       the cells under the pointers, compared first, turn most away cheaply. */
    if (unlikely(ia == snap_ia) && ib == snap_ib && pa == snap_pa && pb == snap_pb &&
        *pa == snapshot->tape[pa - tape] && *pb == snapshot->tape[pb - tape]) {
        SAVE();
        int64_t periods;
        int repeat = repeat_of(bt, snapshot, j, &periods);
        if (repeat == REPEAT_TIE && !stats) {
            result = 0;
            tie_found = 1;
            goto done;
        }
        if (repeat == REPEAT_TIE) {
            /* statistics follow the battle to its last cycle: jump the whole
               periods left, play the rest (less than a period) */
            int32_t left = max_cycles - bt->cycle, period = bt->cycle - snapshot->cycle;
            periods = left / period;
            repeat = periods ? REPEAT_SKIP : NO_REPEAT;
        }
        if (repeat == REPEAT_SKIP) {
            if (stats)
                settle_heat(bt, bt->cycle);
            skip_periods(bt, snapshot, periods);
            if (stats)
                skip_heat(bt, snapshot, periods);
            skipped += bt->cycle - CYCLE();
            rep_a = bt->a.rep;
            rep_b = bt->b.rep;
            cycle = stop_at = bt->cycle;
            budget = 0;
            /* a new phase may follow: snapshots start afresh from here */
            snap_interval = FIRST_SNAPSHOT / 2;
            next_snapshot = cycle;
            goto checkpoint;
        }
    }
    if (likely(budget))
        goto cycle_start;

    cycle = stop_at;
checkpoint:
    if (trace) {
        RECORD_STATE();
        RECORD_NEXT_INSTRUCTIONS();
    }
    if (cycle >= max_cycles) {
        result = 0;
        goto done;
    }
    if (shared && (hi_a - tape) + (WIDE_TAPE - 1 - (lo_b - tape)) >= j->next_len - 1) {
        SAVE();
        if (stats)
            settle_heat(bt, cycle);
        if (fork_battles(j, bt) == RUN_FORKED) {
            result = RUN_FORKED;
            goto done;
        }
    }
    if (cycle >= next_snapshot) {
        SAVE();
        if (stats)
            settle_heat(bt, cycle);
        copy_battle(snapshot, bt);
        snap_ia = ia;
        snap_ib = ib;
        snap_pa = pa;
        snap_pb = pb;
        low_a = sa;
        low_b = sb;
        snap_interval *= 2;
        next_snapshot = cycle + snap_interval;
    }
    goto set_stop;

done:
    cycle = CYCLE();
    if (trace)
        RECORD_STATE();
    SAVE();
    bt->decided_at = tie_found ? max_cycles : cycle;
    /* heat counts the cycles the battle went on after: not a deciding one */
    if (stats && result != RUN_FORKED)
        settle_heat(bt, decided ? cycle - 1 : cycle);
    j->cycles += cycle - first_cycle - skipped - spun;
    return result;
#undef CYCLE
#undef SAVE
#undef RECORD_NEXT_INSTRUCTIONS
#undef RECORD_STATE
}

/* ------------------------------------------------------------------------ */
/* Jousts: the shared battle, its forks, their statistics                  */

/*
 * A battle's statistics as the left program sees a tape of `len` cells.  A
 * real battle has them so.  The shared battle (see fork_battles) has them on
 * its wide tape, where the right program's cells lie `offset` cells further
 * on, and its cells hold the two programs' changes apart: until they meet
 * on a tape no cell has been changed by both, and in kettle the right
 * program's changes are the negatives (decoys, as absolute values, are the
 * same).
 */
static void map_stats(Stats *to, const Stats *from, int32_t len, int32_t offset)
{
    Stats wide = *from;
    memset(to, 0, sizeof *to);
    memcpy(to->heat[0], wide.heat[0], (size_t)len * sizeof(int32_t));
    memcpy(to->heat[1], wide.heat[1] + offset, (size_t)len * sizeof(int32_t));
    memcpy(to->decoy[0], wide.decoy[0], (size_t)len);
    memcpy(to->decoy[1], wide.decoy[1] + offset, (size_t)len);
    to->mark[0] = wide.mark[0];
    to->mark[1] = wide.mark[1];
}

static void real_tape(uint8_t *to, const Battle *bt, int32_t len, int kettle)
{
    int32_t offset = bt->len - len;
    for (int32_t c = 0; c < len; c++)
        to[c] = offset ? (uint8_t)(bt->tape[c] + (kettle ? -1 : 1) * bt->tape[offset + c])
                       : bt->tape[c];
}

/* How a finished battle ended (BFJ_END_*): a death count of 2 is a flag
   zero two cycles running, FELL a program off the tape; neither: the cycle
   limit, or a tie proven early by a repeated state. */
static int end_bits(const Battle *bt)
{
    int bits = ((bt->deaths_a & (FELL - 1)) >= 2 ? BFJ_END_LEFT_FLAG : 0) |
               ((bt->deaths_b & (FELL - 1)) >= 2 ? BFJ_END_RIGHT_FLAG : 0) |
               (bt->deaths_a & FELL ? BFJ_END_LEFT_FELL : 0) |
               (bt->deaths_b & FELL ? BFJ_END_RIGHT_FELL : 0);
    return bits ? bits : BFJ_END_LIMIT;
}

/* Hand out a finished battle's statistics (docs/analytics.md): a program that
   falls off on the right ends the battle before its cycle counts. */
static void record_battle(Joust *j, int index, const Battle *bt, int32_t len, int kettle)
{
    bfj_stats *out = &j->stats[index];
    Stats cells;
    uint8_t tape[MAX_TAPE];
    map_stats(&cells, bt->stats, len, bt->len - len);
    real_tape(tape, bt, len, kettle);
    memset(out, 0, sizeof *out);
    out->cycles = bt->decided_at - (bt->deaths_b >= FELL);
    out->ended = (int16_t)end_bits(bt);
    for (int32_t c = 0; c < len; c++) {
        out->tape[c] = (int8_t)tape[c];
        for (int p = 0; p < 2; p++) {
            out->heat[p][c] = cells.heat[p][c];
            out->decoy[p][c] = cells.decoy[p][c];
        }
    }
}

/* Fork every tape length that the programs' visited ranges now span from
   the shared battle, and run those battles to their end. */
static int fork_battles(Joust *j, const Battle *shared)
{
    int32_t reach = shared->hi_a + (WIDE_TAPE - 1 - shared->lo_b);
    while (j->next_len <= MAX_TAPE && reach >= j->next_len - 1) {
        int32_t len = j->next_len++;
        int32_t offset = WIDE_TAPE - len; /* wide index of the real cell 0 on the right */
        for (int kettle = 0; kettle < 2; kettle++) {
            Battle *bt = &j->fork;
            copy_battle(bt, shared);
            /* in kettle the right program's cells are the negatives */
            real_tape(bt->tape, shared, len, kettle);
            memset(bt->tape + len, 0, WIDE_TAPE - len);
            if (bt->stats)
                map_stats(bt->stats, shared->stats, len, offset);
            bt->len = len;
            bt->kettle = kettle;
            bt->hi_a = len - 1;
            bt->lo_b = 0;
            bt->b.ptr = shared->b.ptr - offset;
            int r = run_battle(bt, j, &j->fork_snapshot, NULL);
            j->outcome[kettle * N_TAPES + (len - MIN_TAPE)] = (int8_t)r;
            j->game_cycles += bt->decided_at;
            if (j->stats)
                record_battle(j, kettle * N_TAPES + (len - MIN_TAPE), bt, len, kettle);
        }
    }
    return j->next_len > MAX_TAPE ? RUN_FORKED : 0;
}

static void start_battle(Battle *bt, int32_t len, int kettle)
{
    int32_t *stack_a = bt->a.stack, *stack_b = bt->b.stack;
    Stats *stats = bt->stats;
    memset(bt, 0, sizeof *bt);
    bt->a.stack = stack_a;
    bt->b.stack = stack_b;
    if (stats) {
        memset(stats, 0, sizeof *stats);
        bt->stats = stats;
    }
    bt->len = len;
    bt->kettle = kettle;
    bt->tape[0] = 128;
    bt->tape[len - 1] = 128;
    bt->b.ptr = len - 1;
    int wide = len == WIDE_TAPE;
    bt->hi_a = wide ? 0 : len - 1;
    bt->lo_b = wide ? len - 1 : 0;
}

/* Give each battle of the joust its repeat-counter stacks (one block). */
static int32_t *give_stacks(Battle **battles, int n, int32_t depth_a, int32_t depth_b)
{
    int32_t *block = malloc(sizeof(int32_t) * (size_t)n * ((size_t)depth_a + depth_b));
    int32_t *next = block;
    for (int i = 0; block && i < n; i++) {
        battles[i]->a.stack = next;
        next += depth_a;
        battles[i]->b.stack = next;
        next += depth_b;
    }
    return block;
}

/* Returns 0, or -1 when out of memory. */
static int run_joust(Joust *j)
{
    Battle shared;
    Battle *battles[] = {&shared, &j->shared_snapshot, &j->fork, &j->fork_snapshot};
    int32_t *block = give_stacks(battles, 4, j->left->stack_depth, j->right->stack_depth);
    Stats *stats = j->stats ? calloc(4, sizeof *stats) : NULL;
    if (!block || (j->stats && !stats)) {
        free(block);
        return -1;
    }
    for (int i = 0; i < 4; i++)
        battles[i]->stats = stats ? &stats[i] : NULL;
    j->next_len = MIN_TAPE;
    j->cycles = j->game_cycles = 0;
    start_battle(&shared, WIDE_TAPE, 0);
    int r = run_battle(&shared, j, &j->shared_snapshot, NULL);
    if (r != RUN_FORKED) {
        /* decided before the programs met: the same on every tape left */
        for (int len = j->next_len; len <= MAX_TAPE; len++) {
            j->outcome[len - MIN_TAPE] = (int8_t)r;
            j->outcome[N_TAPES + len - MIN_TAPE] = (int8_t)r;
            j->game_cycles += 2 * (long long)shared.decided_at;
            for (int kettle = 0; j->stats && kettle < 2; kettle++)
                record_battle(j, kettle * N_TAPES + (len - MIN_TAPE), &shared, len, kettle);
        }
    }
    free(block);
    free(stats);
    return 0;
}
/* ------------------------------------------------------------------------ */
/* Programs                                                                 */

bfj_program *bfj_compile(const unsigned char *source, size_t n, bfj_error *err)
{
    bfj_program *p = calloc(1, sizeof *p);
    if (!p) {
        err->kind = BFJ_ERR_NO_MEMORY;
        err->at = err->other = -1;
        return NULL;
    }
    /* a size_t beyond ptrdiff_t is beyond BFJ_MAX_SOURCE too */
    ptrdiff_t length = n > (size_t)BFJ_MAX_SOURCE ? (ptrdiff_t)BFJ_MAX_SOURCE + 1 : (ptrdiff_t)n;
    if (compile_source(p, source, length, err) < 0) {
        bfj_free(p);
        return NULL;
    }
    return p;
}

void bfj_free(bfj_program *p)
{
    if (!p)
        return;
    free(p->code);
    free(p->src);
    free(p->owner);
    free(p->up_limit);
    free(p);
}

int32_t bfj_instructions(const bfj_program *p)
{
    return p->len;
}

/* ------------------------------------------------------------------------ */
/* The public joust                                                         */

int bfj_joust(const bfj_program *left, const bfj_program *right, int32_t max_cycles,
              bfj_joust_result *result, bfj_stats *stats)
{
    if (max_cycles < 1 || max_cycles > MAX_CYCLES)
        return -1;
    Joust j = {.left = left, .right = right, .max_cycles = max_cycles, .stats = stats};
    if (run_joust(&j) < 0)
        return -1;
    memcpy(result->outcome, j.outcome, sizeof j.outcome);
    result->cycles = j.cycles;
    result->game_cycles = j.game_cycles;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Traces: run_battle one cycle at a time (trace != NULL), no shortcut      */

/* The trace's arrays, with the instructions each program runs kept as
   instruction indices (bfj_trace has them as source offsets: trace_end). */
static int trace_alloc(bfj_trace *t, TraceBuf *buf, int32_t len, int kettle, int32_t max_cycles)
{
    size_t n = (size_t)max_cycles + 1;
    memset(t, 0, sizeof *t);
    buf->ip_a = malloc(n * sizeof(int32_t));
    buf->ip_b = malloc(n * sizeof(int32_t));
    t->source[0] = malloc(n * sizeof(int32_t));
    t->source[1] = malloc(n * sizeof(int32_t));
    buf->ptr_a = t->pointer[0] = malloc(n);
    buf->ptr_b = t->pointer[1] = malloc(n);
    buf->tape = t->tapes = malloc(n * (size_t)len);
    t->tape_length = len;
    t->kettle = kettle;
    t->max_cycles = max_cycles;
    return buf->ip_a && buf->ip_b && t->source[0] && t->source[1] && t->pointer[0] &&
                   t->pointer[1] && t->tapes
               ? 0
               : -1;
}

void bfj_trace_free(bfj_trace *t)
{
    free(t->source[0]);
    free(t->source[1]);
    free(t->pointer[0]);
    free(t->pointer[1]);
    free(t->tapes);
    memset(t, 0, sizeof *t);
}

static int battle_args(int32_t len, int32_t max_cycles)
{
    return len >= MIN_TAPE && len <= MAX_TAPE && max_cycles >= 1 && max_cycles <= MAX_CYCLES;
}

static void trace_start(Battle *bt, TraceBuf *buf, int32_t len, int kettle)
{
    start_battle(bt, len, kettle);
    buf->ptr_a[0] = 0;
    buf->ptr_b[0] = (int8_t)(len - 1);
    memcpy(buf->tape, bt->tape, (size_t)len);
}

/* The battle's end: its outcome, its length and the instructions each
   program ran, as source offsets. */
static void trace_end(bfj_trace *t, const TraceBuf *buf, const bfj_program *left,
                      const bfj_program *right, const Battle *bt, int outcome)
{
    t->outcome = outcome;
    t->cycles = bt->cycle;
    for (int32_t c = 0; c < bt->cycle; c++) {
        t->source[0][c] = buf->ip_a[c] < 0 ? -1 : left->src[buf->ip_a[c]];
        t->source[1][c] = buf->ip_b[c] < 0 ? -1 : right->src[buf->ip_b[c]];
    }
}

/* Run bt in trace mode until cycle `until` or the battle's end; 1 if it
   ended, 0 if it paused at `until`. */
static int run_leg(Battle *bt, const bfj_program *left, const bfj_program *right,
                   int32_t max_cycles, int32_t until, TraceBuf *buf, int *outcome)
{
    Joust j = {.left = left, .right = right, .max_cycles = until < max_cycles ? until : max_cycles};
    *outcome = run_battle(bt, &j, NULL, buf);
    int lost = (bt->deaths_a & (FELL - 1)) >= 2 || (bt->deaths_b & (FELL - 1)) >= 2 ||
               bt->deaths_a >= FELL || bt->deaths_b >= FELL;
    return *outcome != 0 || lost || bt->cycle >= max_cycles;
}

int bfj_trace_battle(const bfj_program *left, const bfj_program *right, int32_t len, int kettle,
                     int32_t max_cycles, bfj_trace *t)
{
    memset(t, 0, sizeof *t);
    if (!battle_args(len, max_cycles))
        return -1;
    TraceBuf buf;
    Battle bt = {.stats = NULL};
    Battle *battles[] = {&bt};
    int32_t *stacks = give_stacks(battles, 1, left->stack_depth, right->stack_depth);
    int rc = -1;
    if (trace_alloc(t, &buf, len, kettle, max_cycles) == 0 && stacks) {
        int outcome;
        trace_start(&bt, &buf, len, kettle);
        run_leg(&bt, left, right, max_cycles, max_cycles, &buf, &outcome);
        trace_end(t, &buf, left, right, &bt, outcome);
        rc = 0;
    }
    free(buf.ip_a);
    free(buf.ip_b);
    free(stacks);
    if (rc < 0)
        bfj_trace_free(t);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The debugger: a trace, and the repeat counters of any cycle              */

/*
 * The trace holds every cycle's tape, pointers and instructions; the repeat
 * counters are the one part of the state it does not keep.  So the battle
 * is traced in legs of BFJ_DEBUG_EVERY cycles with a copy of the whole
 * battle at the start of each, and the counters of cycle c are those of a
 * replay from the copy at or before c: the game is deterministic, and the
 * replay runs the very same interpreter, so it passes through the very
 * same states (at most BFJ_DEBUG_EVERY - 1 cycles of it).
 *
 * A leg ends by lowering the joust's cycle limit to the leg's end: the
 * interpreter stops there as at the limit, with the state saved and the
 * free instructions before the next real one run (as the trace records
 * them), and resumes from that state as from any other.  A stop at the
 * lowered limit is a pause, not an end, unless a program lost in that
 * very cycle (then the deaths say so) or the real limit is reached.
 */
struct bfj_debug {
    const bfj_program *left, *right;
    bfj_trace trace;
    TraceBuf buf;
    int32_t legs;   /* snapshots: leg k starts at cycle k * BFJ_DEBUG_EVERY */
    Battle *starts; /* each leg's first state */
    Battle work;    /* the replays' battle */
    int32_t *stacks;
};

void bfj_debug_free(bfj_debug *d)
{
    if (!d)
        return;
    bfj_trace_free(&d->trace);
    free(d->buf.ip_a);
    free(d->buf.ip_b);
    free(d->starts);
    free(d->stacks);
    free(d);
}

bfj_debug *bfj_debug_new(const bfj_program *left, const bfj_program *right, int32_t len,
                         int kettle, int32_t max_cycles)
{
    if (!battle_args(len, max_cycles))
        return NULL;
    bfj_debug *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->left = left;
    d->right = right;
    int32_t legs = max_cycles / BFJ_DEBUG_EVERY + 1;
    d->starts = calloc((size_t)legs, sizeof *d->starts);
    Battle **battles = malloc(((size_t)legs + 1) * sizeof *battles);
    if (!d->starts || !battles || trace_alloc(&d->trace, &d->buf, len, kettle, max_cycles) < 0) {
        free(battles);
        bfj_debug_free(d);
        return NULL;
    }
    for (int32_t k = 0; k < legs; k++)
        battles[k] = &d->starts[k];
    battles[legs] = &d->work;
    d->stacks = give_stacks(battles, legs + 1, left->stack_depth, right->stack_depth);
    free(battles);
    if (!d->stacks) {
        bfj_debug_free(d);
        return NULL;
    }
    Battle *bt = &d->work;
    trace_start(bt, &d->buf, len, kettle);
    int outcome = 0, ended = 0;
    for (int32_t k = 0; !ended; k++) {
        copy_battle(&d->starts[k], bt);
        d->legs = k + 1;
        ended = run_leg(bt, left, right, max_cycles, (k + 1) * BFJ_DEBUG_EVERY, &d->buf,
                        &outcome);
    }
    trace_end(&d->trace, &d->buf, left, right, bt, outcome);
    return d;
}

const bfj_trace *bfj_debug_trace(const bfj_debug *d)
{
    return &d->trace;
}

int32_t bfj_debug_counters(bfj_debug *d, int32_t cycle, int side, int32_t *opens,
                           int32_t *values, int32_t room)
{
    if (cycle < 0 || cycle > d->trace.cycles || (side != 0 && side != 1))
        return -1;
    int32_t k = cycle / BFJ_DEBUG_EVERY;
    if (k >= d->legs)
        k = d->legs - 1;
    Battle *bt = &d->work;
    copy_battle(bt, &d->starts[k]);
    /* the replay rewrites the trace's own cycles with the same values */
    int outcome;
    if (bt->cycle < cycle)
        run_leg(bt, d->left, d->right, d->trace.max_cycles, cycle, &d->buf, &outcome);
    const bfj_program *p = side ? d->right : d->left;
    ProgState *s = side ? &bt->b : &bt->a;
    const Insn *ip = p->code + s->ip;
    int32_t rep = s->rep, *sp = s->stack + s->sp, *low = sp;
    SETTLE(ip, rep, sp, low); /* cycle 0: the state before any bookkeeping ran */
    (void)low;
    /* owner[] chains the pushers of the live counters, innermost first */
    int32_t depth = 0;
    for (int32_t o = p->owner[ip - p->code]; o >= 0; o = p->owner[o])
        depth++;
    /* the innermost counter is rep, the one under it stack[sp - 1] ... */
    int32_t i = depth;
    const int32_t *below = sp;
    for (int32_t o = p->owner[ip - p->code]; o >= 0; o = p->owner[o]) {
        i--;
        int32_t value = i == depth - 1 ? rep : *--below;
        if (i < room) {
            opens[i] = p->src[o];
            values[i] = value;
        }
    }
    return depth;
}
