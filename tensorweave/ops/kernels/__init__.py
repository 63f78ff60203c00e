"""Kernel engines that declare no op: buffer forwarding, element-wise kernel builders, intra-op
splitting, convolution geometry and im2col, pooling plans, Philox and TF's random distributions."""
