"""Send and Recv (white paper 3.2.2, 5.3): the ops the partitioner puts on cross-device edges."""
