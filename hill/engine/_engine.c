/*
 * hill.engine._engine: the Python binding of the engine's core
 * (hill/engine/core/bfjoust.c, API in bfjoust.h).  It only converts
 * arguments and results; every call into the core runs with the GIL
 * released.  The typed Python API is hill/engine/__init__.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core/bfjoust.h"

static PyObject *ParseErrorType;

typedef struct {
    PyObject_HEAD
    bfj_program *program;
} ProgramObject;

static void Program_dealloc(ProgramObject *self)
{
    bfj_free(self->program);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Program_get_length(ProgramObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(bfj_instructions(self->program));
}

static PyGetSetDef Program_getset[] = {
    {"instructions", (getter)Program_get_length, NULL, "compiled instruction count", NULL},
    {NULL, NULL, NULL, NULL, NULL},
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
    (void)module;
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    ProgramObject *p = PyObject_New(ProgramObject, &ProgramType);
    if (!p) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    bfj_error err = {0};
    Py_BEGIN_ALLOW_THREADS
    p->program = bfj_compile(buf.buf, (size_t)buf.len, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (p->program)
        return (PyObject *)p;
    Py_DECREF(p);
    if (err.kind == BFJ_ERR_NO_MEMORY)
        return PyErr_NoMemory();
    PyObject *e = Py_BuildValue("(sLL)", bfj_error_name(err.kind), (long long)err.at,
                                (long long)err.other);
    if (e) {
        PyErr_SetObject(ParseErrorType, e);
        Py_DECREF(e);
    }
    return NULL;
}

static int parse_max_cycles(long max_cycles)
{
    if (max_cycles < 1 || max_cycles > BFJ_MAX_CYCLES) {
        PyErr_Format(PyExc_ValueError, "max_cycles must be within 1..%d", BFJ_MAX_CYCLES);
        return -1;
    }
    return 0;
}

static PyObject *engine_joust(PyObject *module, PyObject *args)
{
    (void)module;
    ProgramObject *left, *right;
    long max_cycles = BFJ_MAX_CYCLES;
    int with_stats = 0;
    if (!PyArg_ParseTuple(args, "O!O!|lp", &ProgramType, &left, &ProgramType, &right,
                          &max_cycles, &with_stats))
        return NULL;
    if (parse_max_cycles(max_cycles) < 0)
        return NULL;
    bfj_stats *stats = NULL;
    if (with_stats && !(stats = malloc(BFJ_BATTLES * sizeof *stats)))
        return PyErr_NoMemory();
    bfj_joust_result r;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bfj_joust(left->program, right->program, (int32_t)max_cycles, &r, stats);
    Py_END_ALLOW_THREADS
    PyObject *result = NULL;
    if (rc < 0)
        PyErr_NoMemory();
    else if (with_stats)
        result = Py_BuildValue("(y#LLy#)", (const char *)r.outcome, (Py_ssize_t)BFJ_BATTLES,
                               r.cycles, r.game_cycles, (const char *)stats,
                               (Py_ssize_t)(BFJ_BATTLES * sizeof *stats));
    else
        result = Py_BuildValue("(y#LL)", (const char *)r.outcome, (Py_ssize_t)BFJ_BATTLES,
                               r.cycles, r.game_cycles);
    free(stats);
    return result;
}

static PyObject *engine_trace(PyObject *module, PyObject *args)
{
    (void)module;
    ProgramObject *left, *right;
    int len, kettle;
    long max_cycles = BFJ_MAX_CYCLES;
    if (!PyArg_ParseTuple(args, "O!O!ip|l", &ProgramType, &left, &ProgramType, &right,
                          &len, &kettle, &max_cycles))
        return NULL;
    if (parse_max_cycles(max_cycles) < 0)
        return NULL;
    if (len < BFJ_MIN_TAPE || len > BFJ_MAX_TAPE) {
        PyErr_Format(PyExc_ValueError, "tape length must be within %d..%d", BFJ_MIN_TAPE,
                     BFJ_MAX_TAPE);
        return NULL;
    }
    bfj_trace t;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = bfj_trace_battle(left->program, right->program, len, kettle, (int32_t)max_cycles, &t);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        return PyErr_NoMemory();
    Py_ssize_t cycles = t.cycles;
    PyObject *result = Py_BuildValue(
        "(iny#y#y#y#y#)", t.outcome, cycles, (const char *)t.source[0], cycles * 4,
        (const char *)t.source[1], cycles * 4, (const char *)t.pointer[0], cycles + 1,
        (const char *)t.pointer[1], cycles + 1, (const char *)t.tapes, (cycles + 1) * len);
    bfj_trace_free(&t);
    return result;
}

static PyMethodDef engine_methods[] = {
    {"compile", engine_compile, METH_O,
     "compile(source: bytes) -> Program; raises ParseError((name, offset, other_offset)), "
     "name one of PARSE_ERRORS"},
    {"joust", engine_joust, METH_VARARGS,
     "joust(left, right, max_cycles=100000, stats=False) -> "
     "(42 outcome bytes as int8, cycles simulated, cycles the 42 games lasted"
     "[, the 42 battles' statistics: STATS_SIZE bytes each])"},
    {"trace", engine_trace, METH_VARARGS,
     "trace(left, right, tape_length, kettle, max_cycles=100000) -> "
     "(outcome, cycles, source_left, source_right, ptr_left, ptr_right, tapes)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef engine_module = {
    PyModuleDef_HEAD_INIT, "hill.engine._engine", "Native BF Joust engine.", -1, engine_methods,
    NULL, NULL, NULL, NULL,
};

/* The names of the parse errors, in code order, as a tuple. */
static PyObject *parse_error_names(void)
{
    Py_ssize_t n = BFJ_ERR_NO_MEMORY - 1;
    PyObject *names = PyTuple_New(n);
    for (Py_ssize_t i = 0; names && i < n; i++) {
        PyObject *name = PyUnicode_FromString(bfj_error_name((int)i + 1));
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
        PyModule_AddIntConstant(m, "MAX_CYCLES", BFJ_MAX_CYCLES) < 0 ||
        PyModule_AddIntConstant(m, "MAX_NEST", BFJ_MAX_NEST) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SOURCE", BFJ_MAX_SOURCE) < 0 ||
        PyModule_AddIntConstant(m, "MIN_TAPE", BFJ_MIN_TAPE) < 0 ||
        PyModule_AddIntConstant(m, "MAX_TAPE", BFJ_MAX_TAPE) < 0 ||
        PyModule_AddIntConstant(m, "BATTLES", BFJ_BATTLES) < 0 ||
        PyModule_AddIntConstant(m, "STATS_SIZE", (long)sizeof(bfj_stats)) < 0 ||
        PyModule_AddObject(m, "PARSE_ERRORS", errors) < 0) {
        Py_XDECREF(errors);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
