"""Op families, one folder each (array/, math/, linalg/, nn/, state/, random/, strings/, io/,
queues/, readers/, debugging/, sparse/, sendrecv/, script/, control_flow/), plus the shared
toolkit (_util.py) and the kernel engines that declare no op (kernels/).

Within a family, tier-1 modules declare ops (signature, shape function, kernels, the 1:1
wrapper) and import only framework/, _util and kernels/; the family's __init__ and its listed
library modules are tier 2 (public names and composites); grad.py is tier 3 and is imported by
tensorweave/gradients.py only. Importing a family package registers its ops and kernels;
importing tensorweave.gradients registers every gradient. tests/layering.py checks the rules.
"""
