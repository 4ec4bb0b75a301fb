"""A small distributed model that embeds stencilchain: a tracer advected and diffused on a
doubly periodic 3-D grid, split over MPI ranks (`stencilchain[mpi]`).

    python -m stencilchain.examples.model                   # one rank
    mpiexec -n 4 python -m stencilchain.examples.model      # four: the same checksum

`ModelContainer` (containers.py) holds stencilchain's container and the model's own
providers; `settings.py` its configuration section; `physics.py` its programs; `model.py`
the time loop on `stencilchain.distributed`.
"""
