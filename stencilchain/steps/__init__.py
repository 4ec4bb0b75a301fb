from stencilchain import _log as _log  # the package logger's NullHandler, before anything logs
