"""The C engine, built by setuptools; everything else is in pyproject.toml.

The extension is declared here because `[tool.setuptools] ext-modules` in
pyproject.toml is still experimental (setuptools warns on every build).  It
is the engine's plain-C core (hill/engine/core) with its thin Python binding;
the WebAssembly module of the Lab is built from the same core (Makefile)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "hill.engine._engine",
            sources=["hill/engine/_engine.c", "hill/engine/core/bfjoust.c"],
            depends=["hill/engine/core/bfjoust.h"],
            extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wextra"],
        )
    ]
)
