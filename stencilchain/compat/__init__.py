"""Front ends in other DSLs' spelling over stencilchain's IR: `stencilchain.compat.gt4py`
accepts gt4py.next frontend code with only its imports changed."""
