"""Lattice laws of one step's likelihood ratio for random allocation (docs/theory.md §3.8).

A law on [0, K step] given by atoms (masses w[i] at the conditional means c[i] of cells
[k step, (k+1) step), increasing) is moved onto the lattice {j step} two ways:

* ``split_up``: each atom's mass split between its cell's two ends so that its mean is kept -- a
  mean-preserving spread of the true law (it dominates it in convex order);
* ``contract_down``: the cells' atoms grouped, left to right, into buckets whose means are
  lattice points (fractions of an atom allowed) -- the buckets' means are a conditional
  expectation of the atoms, so the lattice law is dominated by the true law in convex order.
  The last, unfinished bucket is dropped (its mass is returned).
"""
import math


from .decorator import kernel

__all__ = ["split_up", "contract_down"]


@kernel
def split_up(w, c, cell, step, out):
    """Atom i (mass w[i] at c[i], inside the cell [cell[i] step, (cell[i]+1) step)) split
    between the cell's ends so that its mean is kept: f = c / step - cell clipped to [0, 1];
    the larger part is formed by a product and the smaller as the difference, so the two parts
    add up to w[i] exactly (Sterbenz)."""
    for i in range(w.size):
        mass = w[i]
        if mass <= 0.0:
            continue
        k = cell[i]
        f = c[i] / step - k
        if f < 0.0:
            f = 0.0
        elif f > 1.0:
            f = 1.0
        if f >= 0.5:
            hi = mass * f
            lo = mass - hi
        else:
            lo = mass * (1.0 - f)
            hi = mass - lo
        out[k] += lo
        out[k + 1] += hi


@kernel
def contract_down(w, c, step, out, up):
    """Buckets of mean j step, built left to right from the atoms (w[i] at c[i], increasing);
    out[j] receives each bucket's mass. An atom within 1e-9 step of a lattice point counts as on
    it. A bucket that cannot reach its lattice point (the next atom is on that point, or there
    is none) goes to the lattice point above its mean when ``up``, below it otherwise: a law
    larger (smaller) than the contraction, pointwise in the natural coupling."""
    m_b = 0.0  # mass of the open bucket
    f_b = 0.0  # its first moment
    for i in range(w.size):
        rem = w[i]
        ck = c[i]
        while rem > 0.0:
            near = math.floor(ck / step + 0.5)
            on_lattice = abs(ck / step - near) <= 1e-9
            if m_b == 0.0:
                if on_lattice:
                    out[int(near)] += rem
                    rem = 0.0
                    break
                m_b = rem
                f_b = rem * ck
                rem = 0.0
                break
            t_index = math.floor(f_b / m_b / step) + 1.0
            t = t_index * step  # the first lattice point above the bucket's mean
            if on_lattice and near == t_index:  # cannot reach t: close it rounded
                out[int(t_index if up else t_index - 1.0)] += m_b
                m_b = 0.0
                f_b = 0.0
                continue
            if ck <= t:
                m_b += rem
                f_b += rem * ck
                rem = 0.0
                break
            x = (t * m_b - f_b) / (ck - t)  # the part of this atom that brings the mean to t
            if x < 0.0:
                x = 0.0
            if x >= rem:
                m_b += rem
                f_b += rem * ck
                rem = 0.0
                break
            out[int(t_index)] += m_b + x
            rem -= x
            m_b = 0.0
            f_b = 0.0
    if m_b > 0.0:
        t_index = math.floor(f_b / m_b / step) + 1.0
        out[int(t_index if up else t_index - 1.0)] += m_b
