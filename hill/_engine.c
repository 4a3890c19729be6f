/*
 * hill._engine: the native BF Joust engine (parse, compile, joust, trace).
 *
 * The Python API lives in hill/engine.py; this file only does the hot work.
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
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MIN_TAPE 10
#define MAX_TAPE 30
#define N_TAPES (MAX_TAPE - MIN_TAPE + 1)
#define N_BATTLES (2 * N_TAPES)
#define MAX_CYCLES 100000
#define MAX_COUNT 100000
#define MAX_NEST 4096
/* The shared battle's tape: wide enough that the two programs' visited
   ranges never meet on it before every real tape length has been forked. */
#define WIDE_TAPE 64

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */

enum {
    /* real instructions: each takes one cycle */
    OP_INC, OP_DEC, OP_LEFT, OP_RIGHT, OP_WAIT, OP_LOOP1, OP_LOOP2, OP_DONE,
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

/* Parse error kinds; hill/engine.py turns them into messages. */
enum {
    ERR_NONE,
    ERR_UNMATCHED_OPEN_PAREN,    /* at the `(` */
    ERR_UNMATCHED_CLOSE_PAREN,   /* at the `)` */
    ERR_BRACE_WITHOUT_PAREN,     /* at the `{` */
    ERR_SECOND_BRACE,            /* at the second `{`, other = the first */
    ERR_UNMATCHED_CLOSE_BRACE,   /* at the `}` */
    ERR_UNCLOSED_BRACE,          /* at the `{`, other = the `)` */
    ERR_UNMATCHED_OPEN_BRACKET,  /* at the `[` */
    ERR_UNMATCHED_CLOSE_BRACKET, /* at the `]` */
    ERR_BRACKET_CROSSES_OUT,     /* at the `)`/`}` closing a level, other = the `[` */
    ERR_BRACKET_CROSSES_IN,      /* at the `]`, other = the unclosed `(`/`{` */
    ERR_PAREN_TOO_DEEP,          /* at the `(` */
    ERR_BRACKET_TOO_DEEP,        /* at the `[` */
    ERR_NO_MEMORY,
};

typedef struct {
    int kind;
    Py_ssize_t at, other;
} ParseErr;

typedef struct {
    uint8_t type;
    int32_t match; /* partner: [..] pairs, ( with its { or ), { with (, } with ) */
    int32_t inner; /* extra links of (A{B}C): ( <-> ), { <-> } */
    int32_t count;
    int32_t src;   /* byte offset in the source */
} POp;

typedef struct {
    POp *ops;
    Py_ssize_t len, cap;
} POpList;

static int pop_append(POpList *l, int type, Py_ssize_t src)
{
    if (l->len == l->cap) {
        Py_ssize_t cap = l->cap ? l->cap * 2 : 256;
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
static int next_command(const unsigned char *s, Py_ssize_t n, Py_ssize_t *at)
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
static int32_t read_count(const unsigned char *s, Py_ssize_t n, Py_ssize_t *at)
{
    Py_ssize_t i = *at;
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

static int tokenize(const unsigned char *s, Py_ssize_t n, POpList *out)
{
    Py_ssize_t i = 0;
    while (i < n) {
        Py_ssize_t src = i;
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
        FAIL(ERR_NO_MEMORY, 0, 0);

    for (int32_t at = 0; at < (int32_t)l->len; at++) {
        POp *op = &ops[at];
        switch (op->type) {
        case OP_REP1:
            if (depth == MAX_NEST)
                FAIL(ERR_PAREN_TOO_DEEP, op->src, -1);
            stack[depth] = at;
            brace_depth_stack[depth] = brace_depth;
            depth++;
            brace_depth = 0;
            break;
        case OP_INNER1: {
            /* belongs to the innermost ( that has no { yet */
            brace_depth++;
            if (brace_depth > depth)
                FAIL(ERR_BRACE_WITHOUT_PAREN, op->src, -1);
            POp *owner = &ops[stack[depth - brace_depth]];
            if (owner->match != -1)
                FAIL(ERR_SECOND_BRACE, op->src, ops[owner->match].src);
            open_braces[open_brace_count++] = at;
            owner->type = OP_IREP1;
            owner->match = at;
            op->match = stack[depth - brace_depth];
            break;
        }
        case OP_INNER2: {
            if (!brace_depth)
                FAIL(ERR_UNMATCHED_CLOSE_BRACE, op->src, -1);
            brace_depth--;
            int32_t open = open_braces[--open_brace_count];
            op->inner = open;
            ops[open].inner = at;
            break;
        }
        case OP_REP2: {
            if (!depth)
                FAIL(ERR_UNMATCHED_CLOSE_PAREN, op->src, -1);
            if (brace_depth)
                FAIL(ERR_UNCLOSED_BRACE, ops[open_braces[open_brace_count - 1]].src, op->src);
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
        FAIL(ERR_UNMATCHED_OPEN_PAREN, ops[stack[depth - 1]].src, -1);
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
        FAIL(ERR_NO_MEMORY, 0, 0);

    for (int32_t at = 0; at < (int32_t)l->len; at++) {
        POp *op = &ops[at];
        switch (op->type) {
        case OP_LOOP1:
            if (depth == MAX_NEST)
                FAIL(ERR_BRACKET_TOO_DEEP, op->src, -1);
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
                FAIL(ERR_BRACKET_CROSSES_OUT, op->src, ops[stack[depth - 1]].src);
            if (levels)
                levels--;
            if (marker_count)
                marker_count--;
            break;
        case OP_LOOP2: {
            if (!depth)
                FAIL(ERR_UNMATCHED_CLOSE_BRACKET, op->src, -1);
            if (levels)
                FAIL(ERR_BRACKET_CROSSES_IN, op->src, ops[markers[marker_count - 1]].src);
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
        FAIL(ERR_UNMATCHED_OPEN_BRACKET, ops[stack[depth - 1]].src, -1);
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
    Py_ssize_t n = l->len;
    POp *ops = l->ops;
    int32_t *delta = calloc((size_t)n + 1, sizeof *delta);
    int32_t *new_index = malloc((size_t)n * sizeof *new_index);
    if (!delta || !new_index) {
        free(delta);
        free(new_index);
        return -1;
    }
    for (Py_ssize_t at = 0; at < n; at++) {
        int t = ops[at].type;
        if ((t == OP_REP1 || t == OP_IREP1 || t == OP_INNER2) && ops[at].count == 0) {
            delta[at]++;
            delta[ops[at].match + 1]--;
        }
    }
    int32_t kept = 0, covered = 0;
    for (Py_ssize_t at = 0; at < n; at++) {
        covered += delta[at];
        new_index[at] = covered ? -1 : kept++;
    }
    for (Py_ssize_t at = 0; at < n; at++) {
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

typedef struct {
    uint8_t op;
    int32_t jump;  /* index to continue at when a jump is taken */
    int32_t count; /* repeat count */
} Insn;

typedef struct {
    PyObject_HEAD
    Insn *code;
    int32_t *src;     /* byte offset in the source of each instruction */
    int32_t len;
    int32_t stack_depth; /* repeat counters needed at run time */
    Py_ssize_t source_len;
} ProgramObject;

static int build_code(ProgramObject *p, const POpList *l)
{
    int32_t n = (int32_t)l->len;
    const POp *ops = l->ops;
    p->code = malloc((size_t)n * sizeof *p->code);
    p->src = malloc((size_t)n * sizeof *p->src);
    int32_t *real_before = malloc(((size_t)n + 1) * sizeof *real_before);
    if (!p->code || !p->src || !real_before) {
        free(real_before);
        return -1;
    }
    real_before[0] = 0;
    for (int32_t i = 0; i < n; i++)
        real_before[i + 1] = real_before[i] + IS_REAL(ops[i].type);

    int32_t depth = 0, max_depth = 0;
    for (int32_t i = 0; i < n; i++) {
        const POp *op = &ops[i];
        Insn *in = &p->code[i];
        in->op = op->type;
        in->jump = -1;
        in->count = op->count;
        p->src[i] = op->src;
        switch (op->type) {
        case OP_LOOP1: case OP_LOOP2:
            in->jump = op->match + 1;
            break;
        case OP_REP1: case OP_IREP1: case OP_INNER2:
            depth++;
            break;
        case OP_REP2: case OP_INNER1:
            in->jump = op->match + 1;
            depth--;
            break;
        case OP_IREP2:
            in->jump = op->match + 1;
            depth--;
            break;
        }
        if (depth > max_depth)
            max_depth = depth;
    }
    /* A repeat whose body holds no real instruction would spin without
       spending a cycle: run its body once (it does nothing anyway). */
    for (int32_t i = 0; i < n; i++) {
        Insn *in = &p->code[i];
        if (in->op != OP_REP2 && in->op != OP_INNER1 && in->op != OP_IREP2)
            continue;
        if (real_before[i] - real_before[in->jump] > 0)
            continue;
        if (in->op == OP_IREP2)
            in->count = 1;
        else
            p->code[in->jump - 1].count = 1;
    }
    free(real_before);
    p->len = n;
    p->stack_depth = max_depth + 1;
    return 0;
}

static int compile_source(ProgramObject *p, const unsigned char *s, Py_ssize_t n, ParseErr *err)
{
    POpList l = {0};
    err->kind = ERR_NONE;
    int ok = tokenize(s, n, &l) == 0 && (l.len < INT32_MAX / 2);
    if (!ok)
        err->kind = ERR_NO_MEMORY;
    else if (match_repeats(&l, err) < 0 || match_loops(&l, err) < 0)
        ok = 0;
    else if (drop_zero_repeats(&l) < 0 || build_code(p, &l) < 0) {
        err->kind = ERR_NO_MEMORY;
        ok = 0;
    }
    free(l.ops);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Battles                                                                  */

typedef struct {
    int32_t ip, ptr, rep;
    int32_t *stack; /* repeat counters; stack[0..sp) in use */
    int32_t sp;
} ProgState;

typedef struct {
    uint8_t tape[WIDE_TAPE];
    int32_t len;       /* tape length */
    int32_t cycle;     /* cycles done */
    int32_t deaths_a, deaths_b;
    ProgState a, b;
    int kettle;
    /* Highest cell the left program has stood on, and lowest for the right
       one.  Moving past them is either falling off (real battles start with
       them at the tape ends) or news for the shared battle. */
    int32_t hi_a, lo_b;
} Battle;

typedef struct {
    int32_t *ip_a, *ip_b;   /* source offset of the instruction run, or -1 */
    int8_t *ptr_a, *ptr_b;  /* pointers after each cycle */
    uint8_t *tape;          /* tape after each cycle, len bytes each */
    int32_t cap;
} TraceBuf;

/* Run the free instructions at *st until a real one is next (repeat
   bookkeeping only: it reads no tape, so when it runs does not matter). */
static inline void settle(ProgState *st, const Insn *code)
{
    for (;;) {
        const Insn *in = &code[st->ip];
        switch (in->op) {
        case OP_REP1: case OP_IREP1:
            st->stack[st->sp++] = st->rep;
            st->rep = in->count;
            st->ip++;
            break;
        case OP_REP2: case OP_INNER1:
            if (--st->rep) {
                st->ip = in->jump;
            } else {
                st->rep = st->stack[--st->sp];
                st->ip++;
            }
            break;
        case OP_INNER2:
            st->stack[st->sp++] = st->rep;
            st->rep = 1;
            st->ip++;
            break;
        case OP_IREP2:
            if (++st->rep <= in->count) {
                st->ip = in->jump;
            } else {
                st->rep = st->stack[--st->sp];
                st->ip++;
            }
            break;
        default:
            return;
        }
    }
}

typedef struct Joust Joust;

/* Outcomes: +1 left wins, 0 tie, -1 right wins.  RUN_FORKED: the shared
   battle handed every tape length over to real battles. */
#define RUN_FORKED 2

static int fork_battles(Joust *j, const Battle *shared);

struct Joust {
    const ProgramObject *left, *right;
    int32_t max_cycles;
    int next_len;               /* shortest tape length not yet forked */
    int8_t outcome[N_BATTLES];  /* sieve 10..30, kettle 10..30 */
    int32_t *scratch_a, *scratch_b; /* repeat stacks of the forked battles */
    long long cycles;           /* battle-cycles simulated, for benchmarks */
};

/*
 * The interpreter.  Both programs execute one real instruction per cycle:
 * left first, then right; the right one's loop tests use the cell value from
 * before the left one acted, so both see the tape as it was at the start of
 * the cycle.  Free instructions run in settle() before a program's turn.
 */
static int run_battle(Battle *bt, const Insn *code_a, const Insn *code_b,
                      Joust *j, TraceBuf *trace)
{
    uint8_t *tape = bt->tape;
    const int32_t len = bt->len, last = len - 1;
    const int32_t max_cycles = j->max_cycles;
    const int32_t flip = bt->kettle ? -1 : 1;
    const int shared = j && trace == NULL && len == WIDE_TAPE;
    ProgState *a = &bt->a, *b = &bt->b;
    int result;

    for (;;) {
        if (trace) {
            settle(a, code_a);
            settle(b, code_b);
            trace->ip_a[bt->cycle] = code_a[a->ip].op == OP_DONE ? -1 : a->ip;
            trace->ip_b[bt->cycle] = code_b[b->ip].op == OP_DONE ? -1 : b->ip;
        }
        const uint8_t b_cell = tape[b->ptr];
        int fell_a = 0, fell_b = 0;

        /* left program */
        settle(a, code_a);
        const Insn *in = &code_a[a->ip];
        switch (in->op) {
        case OP_INC: tape[a->ptr]++; a->ip++; break;
        case OP_DEC: tape[a->ptr]--; a->ip++; break;
        case OP_LEFT:
            if (--a->ptr < 0)
                fell_a = 1;
            a->ip++;
            break;
        case OP_RIGHT:
            if (++a->ptr > bt->hi_a) {
                if (a->ptr >= len)
                    fell_a = 1;
                else
                    bt->hi_a = a->ptr;
            }
            a->ip++;
            break;
        case OP_WAIT: a->ip++; break;
        case OP_LOOP1: a->ip = tape[a->ptr] ? a->ip + 1 : in->jump; break;
        case OP_LOOP2: a->ip = tape[a->ptr] ? in->jump : a->ip + 1; break;
        default: break; /* OP_DONE */
        }

        /* right program: its `>` goes towards lower cells */
        settle(b, code_b);
        in = &code_b[b->ip];
        switch (in->op) {
        case OP_INC: tape[b->ptr] += flip; b->ip++; break;
        case OP_DEC: tape[b->ptr] -= flip; b->ip++; break;
        case OP_LEFT:
            if (++b->ptr >= len)
                fell_b = 1;
            b->ip++;
            break;
        case OP_RIGHT:
            if (--b->ptr < bt->lo_b) {
                if (b->ptr < 0)
                    fell_b = 1;
                else
                    bt->lo_b = b->ptr;
            }
            b->ip++;
            break;
        case OP_WAIT: b->ip++; break;
        case OP_LOOP1: b->ip = b_cell ? b->ip + 1 : in->jump; break;
        case OP_LOOP2: b->ip = b_cell ? in->jump : b->ip + 1; break;
        default: break;
        }

        bt->cycle++;
        if (trace) {
            int32_t c = bt->cycle;
            trace->ptr_a[c] = (int8_t)a->ptr;
            trace->ptr_b[c] = (int8_t)b->ptr;
            memcpy(trace->tape + (size_t)c * len, tape, (size_t)len);
        }

        /* end of the cycle: falls, then two consecutive zero flags */
        if (fell_b) {
            if (!tape[0])
                bt->deaths_a++;
            result = (fell_a || bt->deaths_a >= 2) ? 0 : 1;
            break;
        }
        if (fell_a)
            bt->deaths_a = 2;
        else if (!tape[0])
            bt->deaths_a++;
        else
            bt->deaths_a = 0;
        if (!tape[last])
            bt->deaths_b++;
        else
            bt->deaths_b = 0;
        if (bt->deaths_a >= 2 || bt->deaths_b >= 2) {
            result = (bt->deaths_a >= 2) ? (bt->deaths_b >= 2 ? 0 : -1) : 1;
            break;
        }
        if (bt->cycle >= max_cycles) {
            result = 0;
            break;
        }
        if (shared && bt->hi_a + (WIDE_TAPE - 1 - bt->lo_b) >= j->next_len - 1) {
            if (fork_battles(j, bt) == RUN_FORKED) {
                result = RUN_FORKED;
                break;
            }
        }
    }
    if (j)
        j->cycles += bt->cycle;
    return result;
}

static void copy_state(ProgState *to, const ProgState *from, int32_t *stack)
{
    *to = *from;
    to->stack = stack;
    memcpy(stack, from->stack, (size_t)from->sp * sizeof *stack);
}

/* Fork every tape length whose cells the programs' visited ranges now
   cover from the shared battle; run those battles to their end. */
static int fork_battles(Joust *j, const Battle *shared)
{
    int32_t reach = shared->hi_a + (WIDE_TAPE - 1 - shared->lo_b);
    while (j->next_len <= MAX_TAPE && reach >= j->next_len - 1) {
        int32_t len = j->next_len++;
        for (int kettle = 0; kettle < 2; kettle++) {
            Battle bt;
            memset(bt.tape, 0, sizeof bt.tape);
            int sign = kettle ? -1 : 1;
            int32_t offset = WIDE_TAPE - len; /* wide index of the right's cell 0 */
            for (int32_t c = 0; c < len; c++)
                bt.tape[c] = (uint8_t)(shared->tape[c] + sign * shared->tape[offset + c]);
            bt.len = len;
            bt.cycle = shared->cycle;
            bt.deaths_a = shared->deaths_a;
            bt.deaths_b = shared->deaths_b;
            bt.kettle = kettle;
            bt.hi_a = len - 1;
            bt.lo_b = 0;
            copy_state(&bt.a, &shared->a, j->scratch_a);
            copy_state(&bt.b, &shared->b, j->scratch_b);
            bt.b.ptr = shared->b.ptr - offset;
            int r = run_battle(&bt, j->left->code, j->right->code, j, NULL);
            j->outcome[kettle * N_TAPES + (len - MIN_TAPE)] = (int8_t)r;
        }
    }
    return j->next_len > MAX_TAPE ? RUN_FORKED : 0;
}

static void start_battle(Battle *bt, int32_t len, int kettle, int32_t *stack_a, int32_t *stack_b)
{
    memset(bt, 0, sizeof *bt);
    bt->len = len;
    bt->kettle = kettle;
    bt->tape[0] = 128;
    bt->tape[len - 1] = 128;
    bt->a.ptr = 0;
    bt->b.ptr = len - 1;
    bt->a.stack = stack_a;
    bt->b.stack = stack_b;
    bt->hi_a = 0;
    bt->lo_b = len - 1;
}

/* Returns 0, or -1 when out of memory. */
static int run_joust(Joust *j)
{
    int32_t da = j->left->stack_depth, db = j->right->stack_depth;
    int32_t *stacks = malloc(sizeof(int32_t) * 2 * ((size_t)da + db));
    if (!stacks)
        return -1;
    j->scratch_a = stacks;
    j->scratch_b = stacks + da;
    j->next_len = MIN_TAPE;
    j->cycles = 0;

    Battle shared;
    start_battle(&shared, WIDE_TAPE, 0, stacks + da + db, stacks + 2 * da + db);
    int r = run_battle(&shared, j->left->code, j->right->code, j, NULL);
    if (r != RUN_FORKED) {
        /* decided before the programs met: the same on every tape left */
        for (int len = j->next_len; len <= MAX_TAPE; len++) {
            j->outcome[len - MIN_TAPE] = (int8_t)r;
            j->outcome[N_TAPES + len - MIN_TAPE] = (int8_t)r;
        }
    }
    free(stacks);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Python bindings                                                          */

static PyObject *ParseErrorType;

static void Program_dealloc(ProgramObject *self)
{
    free(self->code);
    free(self->src);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Program_get_length(ProgramObject *self, void *closure)
{
    return PyLong_FromLong(self->len);
}

static PyObject *Program_get_source_length(ProgramObject *self, void *closure)
{
    return PyLong_FromSsize_t(self->source_len);
}

static PyObject *Program_get_offsets(ProgramObject *self, void *closure)
{
    return PyBytes_FromStringAndSize((const char *)self->src, (Py_ssize_t)self->len * 4);
}

static PyGetSetDef Program_getset[] = {
    {"instructions", (getter)Program_get_length, NULL, "compiled instruction count", NULL},
    {"source_length", (getter)Program_get_source_length, NULL, "source size in bytes", NULL},
    {"offsets", (getter)Program_get_offsets, NULL,
     "int32 source byte offset of each compiled instruction", NULL},
    {NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hill._engine.Program",
    .tp_basicsize = sizeof(ProgramObject),
    .tp_dealloc = (destructor)Program_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled BF Joust program (immutable; safe to share between threads).",
    .tp_getset = Program_getset,
};

static PyObject *engine_compile(PyObject *module, PyObject *arg)
{
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    ProgramObject *p = PyObject_New(ProgramObject, &ProgramType);
    if (!p) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    p->code = NULL;
    p->src = NULL;
    p->len = 0;
    p->source_len = buf.len;
    ParseErr err = {0};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = compile_source(p, buf.buf, buf.len, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (rc < 0) {
        Py_DECREF(p);
        if (err.kind == ERR_NO_MEMORY)
            return PyErr_NoMemory();
        PyObject *e = Py_BuildValue("(inn)", err.kind, err.at, err.other);
        if (e) {
            PyErr_SetObject(ParseErrorType, e);
            Py_DECREF(e);
        }
        return NULL;
    }
    return (PyObject *)p;
}

static int parse_max_cycles(long max_cycles)
{
    if (max_cycles < 1 || max_cycles > MAX_CYCLES) {
        PyErr_Format(PyExc_ValueError, "max_cycles must be within 1..%d", MAX_CYCLES);
        return -1;
    }
    return 0;
}

static PyObject *engine_joust(PyObject *module, PyObject *args)
{
    ProgramObject *left, *right;
    long max_cycles = MAX_CYCLES;
    if (!PyArg_ParseTuple(args, "O!O!|l", &ProgramType, &left, &ProgramType, &right, &max_cycles))
        return NULL;
    if (parse_max_cycles(max_cycles) < 0)
        return NULL;
    Joust j = {.left = left, .right = right, .max_cycles = (int32_t)max_cycles};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = run_joust(&j);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return PyErr_NoMemory();
    return Py_BuildValue("(y#L)", (const char *)j.outcome, (Py_ssize_t)N_BATTLES, j.cycles);
}

static PyObject *engine_trace(PyObject *module, PyObject *args)
{
    ProgramObject *left, *right;
    int len, kettle;
    long max_cycles = MAX_CYCLES;
    if (!PyArg_ParseTuple(args, "O!O!ip|l", &ProgramType, &left, &ProgramType, &right,
                          &len, &kettle, &max_cycles))
        return NULL;
    if (parse_max_cycles(max_cycles) < 0)
        return NULL;
    if (len < MIN_TAPE || len > MAX_TAPE) {
        PyErr_Format(PyExc_ValueError, "tape length must be within %d..%d", MIN_TAPE, MAX_TAPE);
        return NULL;
    }
    size_t n = (size_t)max_cycles + 1;
    TraceBuf tr = {
        .ip_a = malloc(n * 4), .ip_b = malloc(n * 4),
        .ptr_a = malloc(n), .ptr_b = malloc(n),
        .tape = malloc(n * (size_t)len), .cap = (int32_t)n,
    };
    int32_t *stacks = malloc(sizeof(int32_t) * ((size_t)left->stack_depth + right->stack_depth));
    PyObject *result = NULL;
    if (!tr.ip_a || !tr.ip_b || !tr.ptr_a || !tr.ptr_b || !tr.tape || !stacks) {
        PyErr_NoMemory();
        goto done;
    }
    Battle bt;
    int outcome;
    Joust j = {.left = left, .right = right, .max_cycles = (int32_t)max_cycles};
    Py_BEGIN_ALLOW_THREADS
    start_battle(&bt, len, kettle, stacks, stacks + left->stack_depth);
    bt.hi_a = len - 1;
    bt.lo_b = 0;
    tr.ptr_a[0] = 0;
    tr.ptr_b[0] = (int8_t)(len - 1);
    memcpy(tr.tape, bt.tape, (size_t)len);
    outcome = run_battle(&bt, left->code, right->code, &j, &tr);
    /* map instruction indices to source offsets */
    for (int32_t c = 0; c < bt.cycle; c++) {
        tr.ip_a[c] = tr.ip_a[c] < 0 ? -1 : left->src[tr.ip_a[c]];
        tr.ip_b[c] = tr.ip_b[c] < 0 ? -1 : right->src[tr.ip_b[c]];
    }
    Py_END_ALLOW_THREADS
    int32_t cycles = bt.cycle;
    result = Py_BuildValue("(iiy#y#y#y#y#)", outcome, cycles,
                           (const char *)tr.ip_a, (Py_ssize_t)cycles * 4,
                           (const char *)tr.ip_b, (Py_ssize_t)cycles * 4,
                           (const char *)tr.ptr_a, (Py_ssize_t)cycles + 1,
                           (const char *)tr.ptr_b, (Py_ssize_t)cycles + 1,
                           (const char *)tr.tape, (Py_ssize_t)(cycles + 1) * len);
done:
    free(tr.ip_a);
    free(tr.ip_b);
    free(tr.ptr_a);
    free(tr.ptr_b);
    free(tr.tape);
    free(stacks);
    return result;
}

static PyMethodDef engine_methods[] = {
    {"compile", engine_compile, METH_O,
     "compile(source: bytes) -> Program; raises ParseError((kind, offset, other_offset))"},
    {"joust", engine_joust, METH_VARARGS,
     "joust(left, right, max_cycles=100000) -> (42 outcome bytes as int8, cycles simulated)"},
    {"trace", engine_trace, METH_VARARGS,
     "trace(left, right, tape_length, kettle, max_cycles=100000) -> "
     "(outcome, cycles, ip_left, ip_right, ptr_left, ptr_right, tapes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef engine_module = {
    PyModuleDef_HEAD_INIT, "hill._engine", "Native BF Joust engine.", -1, engine_methods,
};

PyMODINIT_FUNC PyInit__engine(void)
{
    if (PyType_Ready(&ProgramType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&engine_module);
    if (!m)
        return NULL;
    ParseErrorType = PyErr_NewException("hill._engine.ParseError", PyExc_ValueError, NULL);
    Py_INCREF(&ProgramType);
    if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0 ||
        PyModule_AddObject(m, "ParseError", ParseErrorType) < 0 ||
        PyModule_AddIntConstant(m, "MAX_CYCLES", MAX_CYCLES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_NEST", MAX_NEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
