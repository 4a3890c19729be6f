"""The C engine, built by setuptools; everything else is in pyproject.toml.

The extension is declared here because `[tool.setuptools] ext-modules` in
pyproject.toml is still experimental (setuptools warns on every build)."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "hill.engine._engine",
            sources=["hill/engine/_engine.c"],
            extra_compile_args=["-O2", "-std=c11"],
        )
    ]
)
