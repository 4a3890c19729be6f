/*
 * hill.engine._engine: the native BF Joust engine (parse, compile, joust, trace).
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
    OP_INC, OP_DEC, OP_LEFT, OP_RIGHT, OP_WAIT, OP_LOOP1, OP_LOOP2,
    OP_LOOP1X, OP_LOOP2X, /* a loop from A into C of (A{B}C): see run_battle */
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

/* Parse error kinds; Python sees them by name (ERROR_NAMES below, exported
   as PARSE_ERRORS) and hill/engine.py turns each name into a message. */
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

static const char *const ERROR_NAMES[] = {
    [ERR_UNMATCHED_OPEN_PAREN] = "unmatched_open_paren",
    [ERR_UNMATCHED_CLOSE_PAREN] = "unmatched_close_paren",
    [ERR_BRACE_WITHOUT_PAREN] = "brace_without_paren",
    [ERR_SECOND_BRACE] = "second_brace",
    [ERR_UNMATCHED_CLOSE_BRACE] = "unmatched_close_brace",
    [ERR_UNCLOSED_BRACE] = "unclosed_brace",
    [ERR_UNMATCHED_OPEN_BRACKET] = "unmatched_open_bracket",
    [ERR_UNMATCHED_CLOSE_BRACKET] = "unmatched_close_bracket",
    [ERR_BRACKET_CROSSES_OUT] = "bracket_crosses_out",
    [ERR_BRACKET_CROSSES_IN] = "bracket_crosses_in",
    [ERR_PAREN_TOO_DEEP] = "paren_too_deep",
    [ERR_BRACKET_TOO_DEEP] = "bracket_too_deep",
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

typedef struct Insn {
    const struct Insn *jump; /* where to continue when a jump is taken */
    int32_t count;           /* repeat count */
    uint8_t op;
} Insn;

typedef struct {
    PyObject_HEAD
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
} ProgramObject;

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
static int find_owners(ProgramObject *p, const POp *ops)
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

static int build_code(ProgramObject *p, const POpList *l)
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
        /* jumps land just past the partner: `[` past `]`, `)` past `(` */
        in->jump = (op->type == OP_LOOP1 || op->type == OP_LOOP2 || is_backjump(op->type))
                       ? &p->code[op->match + 1] : NULL;
        p->src[i] = op->src;
    }
    p->len = n;
    if (run_empty_bodies_once(p->code, n, ops) < 0)
        return -1;
    return find_owners(p, ops);
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

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef struct {
    int32_t ip, ptr, rep; /* rep: the innermost live repeat counter */
    int32_t sp;
    int32_t *stack;       /* the counters below it: stack[0..sp) */
    uint32_t crossings;   /* OP_LOOP1X/OP_LOOP2X jumps taken */
} ProgState;

typedef struct {
    uint8_t tape[WIDE_TAPE];
    int32_t len;          /* tape length */
    int32_t cycle;        /* cycles done */
    int32_t deaths_a, deaths_b; /* consecutive end-of-cycle zero flags; 2: fell off */
    int kettle;
    /* Highest cell the left program has stood on, lowest for the right one.
       Real battles start with them at the tape ends, so passing them means
       falling off; in the shared battle it means the programs drew closer. */
    int32_t hi_a, lo_b;
    ProgState a, b;
    int32_t decided_at; /* the game's length: the cycle limit for a tie found early */
} Battle;

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
    const ProgramObject *left, *right;
    int32_t max_cycles;
    int next_len;               /* shortest tape length not yet forked */
    int8_t outcome[N_BATTLES];  /* sieve 10..30, kettle 10..30 */
    long long cycles;           /* battle-cycles simulated, for benchmarks */
    long long game_cycles;      /* the 42 games' lengths added up */
    Battle fork, fork_snapshot, shared_snapshot;
} Joust;

static void copy_battle(Battle *to, const Battle *from)
{
    int32_t *stack_a = to->a.stack, *stack_b = to->b.stack;
    *to = *from;
    to->a.stack = stack_a;
    to->b.stack = stack_b;
    memcpy(stack_a, from->a.stack, (size_t)from->a.sp * sizeof *stack_a);
    memcpy(stack_b, from->b.stack, (size_t)from->b.sp * sizeof *stack_b);
}

/*
 * A counter that cannot reach its exit before the cycle limit: it moves one
 * step per cycle at most, down towards 0 in a plain repeat or in A, up
 * towards its count in C.  If the program took a crossing jump since the
 * snapshot (`monotone` false), a counter of (A{B}C) may change direction.
 */
static int counter_is_far(const ProgramObject *p, int32_t owner, int32_t value,
                          int32_t remaining, int monotone)
{
    if (owner < 0)
        return 0;
    int32_t limit = p->up_limit[owner];
    int far_from_zero = value > remaining + 1;
    int far_from_limit = limit - value > remaining + 1;
    if (limit == 0)
        return far_from_zero;
    if (!monotone)
        return far_from_zero && far_from_limit;
    return p->code[owner].op == OP_INNER2 ? far_from_limit : far_from_zero;
}

static int same_counters(const ProgramObject *p, const ProgState *now, int32_t now_left,
                         const ProgState *then, int32_t then_left)
{
    if (now->sp != then->sp)
        return 0;
    int monotone = now->crossings == then->crossings;
    int32_t owner = p->owner[now->ip];
    for (int32_t k = now->sp; k >= 0; k--) {
        int32_t u = k == now->sp ? now->rep : now->stack[k];
        int32_t v = k == now->sp ? then->rep : then->stack[k];
        if (u != v && !(counter_is_far(p, owner, u, now_left, monotone) &&
                        counter_is_far(p, owner, v, then_left, monotone)))
            return 0;
        if (owner >= 0)
            owner = p->owner[owner];
    }
    return 1;
}

/*
 * Is the battle now in the state it was in at the snapshot, but for repeat
 * counters too far from their ends to matter?  Then it will go round the
 * same loop until the cycle limit (nothing was decided during the loop), so
 * it is a tie.  This settles most timeouts after a few thousand cycles.
 */
static int same_state(const Battle *now, const Battle *then, const Joust *j)
{
    if (now->a.ip != then->a.ip || now->b.ip != then->b.ip || now->a.ptr != then->a.ptr ||
        now->b.ptr != then->b.ptr || now->deaths_a != then->deaths_a ||
        now->deaths_b != then->deaths_b || now->hi_a != then->hi_a || now->lo_b != then->lo_b ||
        memcmp(now->tape, then->tape, (size_t)now->len) != 0)
        return 0;
    int32_t now_left = j->max_cycles - now->cycle, then_left = j->max_cycles - then->cycle;
    return same_counters(j->left, &now->a, now_left, &then->a, then_left) &&
           same_counters(j->right, &now->b, now_left, &then->b, then_left);
}

/* The free instructions, on a program's instruction pointer, innermost
   counter and counter stack pointer. */
#define REP_PUSH(ip, rep, sp, value) (*(sp)++ = (rep), (rep) = (value), (ip)++)
#define REP_DOWN(ip, rep, sp) (--(rep) ? ((ip) = (ip)->jump) : ((rep) = *--(sp), (ip)++))
#define REP_UP(ip, rep, sp) \
    (++(rep) <= (ip)->count ? ((ip) = (ip)->jump) : ((rep) = *--(sp), (ip)++))

/* Run free instructions until a real one is next (repeat bookkeeping reads
   no tape, so running it early changes nothing). */
#define SETTLE(ip, rep, sp)                                                   \
    for (;;) {                                                                \
        switch ((ip)->op) {                                                   \
        case OP_REP1: case OP_IREP1: REP_PUSH(ip, rep, sp, (ip)->count); continue; \
        case OP_REP2: case OP_INNER1: REP_DOWN(ip, rep, sp); continue;        \
        case OP_INNER2: REP_PUSH(ip, rep, sp, 1); continue;                   \
        case OP_IREP2: REP_UP(ip, rep, sp); continue;                         \
        }                                                                     \
        break;                                                                \
    }

static int fork_battles(Joust *j, const Battle *shared);

/*
 * The interpreter.  Each cycle the left program runs one real instruction,
 * then the right one; the right one's loop tests read the cell as it was
 * before the left one acted, so both see the tape of the start of the cycle.
 * Falling off the tape counts as a dead flag (deaths = 2), decided at the
 * end of the cycle like the flags.  The common path is one indirect jump per
 * instruction; everything rare (trace, cycle limit, snapshots, forks) waits
 * for the checkpoint at `stop_at`.  `snapshot` is NULL for a traced battle:
 * a trace shows every cycle.
 */
static int run_battle(Battle *bt, Joust *j, Battle *snapshot, TraceBuf *trace)
{
#define COMMON_OPS(side) [OP_WAIT] = &&side##_wait, [OP_LOOP1] = &&side##_loop1, \
    [OP_LOOP2] = &&side##_loop2, [OP_LOOP1X] = &&side##_loop1x,                   \
    [OP_LOOP2X] = &&side##_loop2x, [OP_REP1] = &&side##_rep1,                     \
    [OP_IREP1] = &&side##_rep1, [OP_REP2] = &&side##_rep2,                        \
    [OP_INNER1] = &&side##_rep2, [OP_INNER2] = &&side##_inner2,                   \
    [OP_IREP2] = &&side##_irep2, [OP_LEFT] = &&side##_left, [OP_RIGHT] = &&side##_right
    static void *const ops_a[N_OPS] = {
        [OP_INC] = &&a_inc, [OP_DEC] = &&a_dec, [OP_DONE] = &&a_done, COMMON_OPS(a),
    };
    static void *const ops_b_sieve[N_OPS] = {
        [OP_INC] = &&b_inc, [OP_DEC] = &&b_dec, [OP_DONE] = &&end_cycle, COMMON_OPS(b),
    };
    /* kettle: the right program's + and - swapped */
    static void *const ops_b_kettle[N_OPS] = {
        [OP_INC] = &&b_dec, [OP_DEC] = &&b_inc, [OP_DONE] = &&end_cycle, COMMON_OPS(b),
    };
#undef COMMON_OPS
    void *const *const ops_b = bt->kettle ? ops_b_kettle : ops_b_sieve;
    const Insn *const code_a = j->left->code, *const code_b = j->right->code;
    uint8_t *const tape = bt->tape;
    const int32_t len = bt->len, last = len - 1, max_cycles = j->max_cycles;
    const int shared = trace == NULL && len == WIDE_TAPE;
    const int32_t first_cycle = bt->cycle;

    /* the state, in locals so that it lives in registers */
    const Insn *ia = code_a + bt->a.ip, *ib = code_b + bt->b.ip;
    int32_t pa = bt->a.ptr, pb = bt->b.ptr, rep_a = bt->a.rep, rep_b = bt->b.rep;
    int32_t *sa = bt->a.stack + bt->a.sp, *sb = bt->b.stack + bt->b.sp;
    int32_t hi_a = bt->hi_a, lo_b = bt->lo_b;
    int32_t deaths_a = bt->deaths_a, deaths_b = bt->deaths_b, cycle = bt->cycle;
    int32_t stop_at; /* the next checkpoint is at the end of cycle stop_at */
    int32_t budget;  /* cycles before it (kept in one register instead of two) */
    int result, tie_found = 0;
    uint8_t b_cell;

    const Insn *snap_ia = NULL, *snap_ib = NULL; /* no snapshot taken yet */
    int32_t snap_interval = FIRST_SNAPSHOT;
    int32_t next_snapshot = snapshot ? cycle + snap_interval : INT32_MAX;

#define CYCLE() (stop_at - budget)
#define SAVE() do {                                                           \
        bt->a.ip = (int32_t)(ia - code_a); bt->b.ip = (int32_t)(ib - code_b);   \
        bt->a.ptr = pa; bt->b.ptr = pb; bt->a.rep = rep_a; bt->b.rep = rep_b;   \
        bt->a.sp = (int32_t)(sa - bt->a.stack);                                 \
        bt->b.sp = (int32_t)(sb - bt->b.stack);                                 \
        bt->hi_a = hi_a; bt->lo_b = lo_b; bt->cycle = CYCLE();                  \
        bt->deaths_a = deaths_a; bt->deaths_b = deaths_b;                       \
    } while (0)
#define RECORD_NEXT_INSTRUCTIONS() do {                                       \
        SETTLE(ia, rep_a, sa);                                                  \
        SETTLE(ib, rep_b, sb);                                                  \
        trace->ip_a[cycle] = ia->op == OP_DONE ? -1 : (int32_t)(ia - code_a);   \
        trace->ip_b[cycle] = ib->op == OP_DONE ? -1 : (int32_t)(ib - code_b);   \
    } while (0)
#define RECORD_STATE() do {                                                   \
        trace->ptr_a[cycle] = (int8_t)pa; trace->ptr_b[cycle] = (int8_t)pb;     \
        memcpy(trace->tape + (size_t)cycle * len, tape, (size_t)len);           \
    } while (0)

    if (trace)
        RECORD_NEXT_INSTRUCTIONS();
set_stop:
    stop_at = trace ? cycle + 1 : (next_snapshot < max_cycles ? next_snapshot : max_cycles);
    budget = stop_at - cycle;
cycle_start:
    b_cell = tape[pb];
    goto *ops_a[ia->op];

    /* the left program */
a_inc: tape[pa]++; ia++; goto *ops_b[ib->op];
a_dec: tape[pa]--; ia++; goto *ops_b[ib->op];
a_left:
    if (unlikely(--pa < 0))
        deaths_a = 2;
    ia++;
    goto *ops_b[ib->op];
a_right:
    if (unlikely(++pa > hi_a)) {
        if (pa >= len)
            deaths_a = 2;
        else {
            hi_a = pa;
            stop_at -= budget - 1; /* shared battle: see whether to fork */
            budget = 1;
        }
    }
    ia++;
    goto *ops_b[ib->op];
a_wait: ia++; goto *ops_b[ib->op];
a_loop1: ia = tape[pa] ? ia + 1 : ia->jump; goto *ops_b[ib->op];
a_loop2: ia = tape[pa] ? ia->jump : ia + 1; goto *ops_b[ib->op];
a_loop1x:
    if (tape[pa]) ia++; else { ia = ia->jump; bt->a.crossings++; }
    goto *ops_b[ib->op];
a_loop2x:
    if (tape[pa]) { ia = ia->jump; bt->a.crossings++; } else ia++;
    goto *ops_b[ib->op];
a_done: goto *ops_b[ib->op];
a_rep1: REP_PUSH(ia, rep_a, sa, ia->count); goto *ops_a[ia->op];
a_rep2: REP_DOWN(ia, rep_a, sa); goto *ops_a[ia->op];
a_inner2: REP_PUSH(ia, rep_a, sa, 1); goto *ops_a[ia->op];
a_irep2: REP_UP(ia, rep_a, sa); goto *ops_a[ia->op];

    /* the right program: its `<` goes towards higher cells, `>` lower */
b_inc: tape[pb]++; ib++; goto end_cycle;
b_dec: tape[pb]--; ib++; goto end_cycle;
b_left:
    if (unlikely(++pb > last))
        deaths_b = 2;
    ib++;
    goto end_cycle;
b_right:
    if (unlikely(--pb < lo_b)) {
        if (pb < 0)
            deaths_b = 2;
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
b_rep1: REP_PUSH(ib, rep_b, sb, ib->count); goto *ops_b[ib->op];
b_rep2: REP_DOWN(ib, rep_b, sb); goto *ops_b[ib->op];
b_inner2: REP_PUSH(ib, rep_b, sb, 1); goto *ops_b[ib->op];
b_irep2: REP_UP(ib, rep_b, sb); goto *ops_b[ib->op];

end_cycle:
    budget--;
    /* a zero flag twice in a row loses; a fall (2) stays */
    deaths_a = tape[0] ? (deaths_a & 2) : deaths_a + 1;
    deaths_b = tape[last] ? (deaths_b & 2) : deaths_b + 1;
    if (unlikely((deaths_a | deaths_b) >= 2)) {
        result = deaths_a >= 2 ? (deaths_b >= 2 ? 0 : -1) : 1;
        goto done;
    }
    if (unlikely(ia == snap_ia) && ib == snap_ib && pa == snapshot->a.ptr &&
        pb == snapshot->b.ptr) {
        SAVE();
        if (same_state(bt, snapshot, j)) {
            result = 0;
            tie_found = 1;
            goto done;
        }
    }
    if (likely(budget))
        goto cycle_start;

    /* checkpoint */
    cycle = stop_at;
    if (trace) {
        RECORD_STATE();
        RECORD_NEXT_INSTRUCTIONS();
    }
    if (cycle >= max_cycles) {
        result = 0;
        goto done;
    }
    if (shared && hi_a + (WIDE_TAPE - 1 - lo_b) >= j->next_len - 1) {
        SAVE();
        if (fork_battles(j, bt) == RUN_FORKED) {
            result = RUN_FORKED;
            goto done;
        }
    }
    if (cycle >= next_snapshot) {
        SAVE();
        copy_battle(snapshot, bt);
        snap_ia = ia;
        snap_ib = ib;
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
    j->cycles += cycle - first_cycle;
    return result;
#undef CYCLE
#undef SAVE
#undef RECORD_NEXT_INSTRUCTIONS
#undef RECORD_STATE
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
            int sign = kettle ? -1 : 1;
            for (int32_t c = 0; c < len; c++)
                bt->tape[c] = (uint8_t)(shared->tape[c] + sign * shared->tape[offset + c]);
            memset(bt->tape + len, 0, WIDE_TAPE - len);
            bt->len = len;
            bt->kettle = kettle;
            bt->hi_a = len - 1;
            bt->lo_b = 0;
            bt->b.ptr = shared->b.ptr - offset;
            int r = run_battle(bt, j, &j->fork_snapshot, NULL);
            j->outcome[kettle * N_TAPES + (len - MIN_TAPE)] = (int8_t)r;
            j->game_cycles += bt->decided_at;
        }
    }
    return j->next_len > MAX_TAPE ? RUN_FORKED : 0;
}

static void start_battle(Battle *bt, int32_t len, int kettle)
{
    int32_t *stack_a = bt->a.stack, *stack_b = bt->b.stack;
    memset(bt, 0, sizeof *bt);
    bt->a.stack = stack_a;
    bt->b.stack = stack_b;
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
    if (!block)
        return -1;
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
        }
    }
    free(block);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Python bindings                                                          */

static PyObject *ParseErrorType;

static void Program_dealloc(ProgramObject *self)
{
    free(self->code);
    free(self->src);
    free(self->owner);
    free(self->up_limit);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Program_get_length(ProgramObject *self, void *closure)
{
    return PyLong_FromLong(self->len);
}

static PyGetSetDef Program_getset[] = {
    {"instructions", (getter)Program_get_length, NULL, "compiled instruction count", NULL},
    {NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hill.engine._engine.Program",
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
    p->owner = NULL;
    p->up_limit = NULL;
    p->len = 0;
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
        PyObject *e = Py_BuildValue("(snn)", ERROR_NAMES[err.kind], err.at, err.other);
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
    return Py_BuildValue("(y#LL)", (const char *)j.outcome, (Py_ssize_t)N_BATTLES, j.cycles,
                         j.game_cycles);
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
        .tape = malloc(n * (size_t)len),
    };
    Battle bt;
    Battle *battles[] = {&bt};
    int32_t *stacks = give_stacks(battles, 1, left->stack_depth, right->stack_depth);
    PyObject *result = NULL;
    if (!tr.ip_a || !tr.ip_b || !tr.ptr_a || !tr.ptr_b || !tr.tape || !stacks) {
        PyErr_NoMemory();
        goto done;
    }
    int outcome;
    Joust j = {.left = left, .right = right, .max_cycles = (int32_t)max_cycles};
    Py_BEGIN_ALLOW_THREADS
    start_battle(&bt, len, kettle);
    tr.ptr_a[0] = 0;
    tr.ptr_b[0] = (int8_t)(len - 1);
    memcpy(tr.tape, bt.tape, (size_t)len);
    outcome = run_battle(&bt, &j, NULL, &tr);
    /* instruction indices to source offsets */
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
     "compile(source: bytes) -> Program; raises ParseError((name, offset, other_offset)), "
     "name one of PARSE_ERRORS"},
    {"joust", engine_joust, METH_VARARGS,
     "joust(left, right, max_cycles=100000) -> "
     "(42 outcome bytes as int8, cycles simulated, cycles the 42 games lasted)"},
    {"trace", engine_trace, METH_VARARGS,
     "trace(left, right, tape_length, kettle, max_cycles=100000) -> "
     "(outcome, cycles, ip_left, ip_right, ptr_left, ptr_right, tapes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef engine_module = {
    PyModuleDef_HEAD_INIT, "hill.engine._engine", "Native BF Joust engine.", -1, engine_methods,
};

/* The names of the parse errors, in code order, as a tuple. */
static PyObject *parse_error_names(void)
{
    Py_ssize_t n = ERR_NO_MEMORY - 1;
    PyObject *names = PyTuple_New(n);
    for (Py_ssize_t i = 0; names && i < n; i++) {
        PyObject *name = PyUnicode_FromString(ERROR_NAMES[i + 1]);
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, i, name);
    }
    return names;
}

PyMODINIT_FUNC PyInit__engine(void)
{
    if (PyType_Ready(&ProgramType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&engine_module);
    if (!m)
        return NULL;
    PyObject *errors = parse_error_names();
    ParseErrorType = PyErr_NewException("hill.engine._engine.ParseError", PyExc_ValueError, NULL);
    Py_INCREF(&ProgramType);
    if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0 ||
        PyModule_AddObject(m, "ParseError", ParseErrorType) < 0 ||
        PyModule_AddIntConstant(m, "MAX_CYCLES", MAX_CYCLES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_NEST", MAX_NEST) < 0 ||
        PyModule_AddIntConstant(m, "MIN_TAPE", MIN_TAPE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TAPE", MAX_TAPE) < 0 ||
        PyModule_AddIntConstant(m, "BATTLES", N_BATTLES) < 0 ||
        PyModule_AddObject(m, "PARSE_ERRORS", errors) < 0) {
        Py_XDECREF(errors);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
