"""Dynamic control flow (white paper 4.4; OSDI 3.4): the primitives and what is built on them."""
