//! [`Islands`]: the contacts and joint rows of a step split into groups that do not interact
//! (PGS's `islands = true`): two constraints are in the same island when a chain of constraints
//! joins them through moving bodies. The ground and other static colliders join nothing.

use toolkit::contact_blocks::ContactBlocks;

/// The islands of one step, rebuilt by [`Islands::build`] into buffers kept between steps.
#[derive(Debug, Default)]
pub(super) struct Islands {
    /// Union–find forest over velocity indices (only the first index of each DOF block is used).
    parent: Vec<usize>,
    /// Contact indices, island after island, each island in problem order.
    contacts: Vec<usize>,
    /// Island `k`'s contacts are `contacts[contact_start[k]..contact_start[k + 1]]`.
    contact_start: Vec<usize>,
    /// Bilateral row indices, likewise.
    rows: Vec<usize>,
    row_start: Vec<usize>,
    /// Per root of the forest: its island (`usize::MAX` if none yet).
    island_of_root: Vec<usize>,
    /// Per constraint: its island (contacts first, then rows).
    island: Vec<usize>,
}

impl Islands {
    /// Splits the constraints of `blocks` (a problem with `nv` velocity DOFs) into islands if
    /// `split`, else makes one island of all of them. Islands are numbered in the order of their
    /// first constraint (contacts before rows); constraints keep problem order within an island,
    /// so one island of everything sweeps exactly as without islands.
    pub fn build(&mut self, blocks: &ContactBlocks, nv: usize, split: bool) {
        let (nc, nb) = (blocks.blocks.len(), blocks.bilateral.len());
        self.island.clear();
        if split {
            self.parent.clear();
            self.parent.extend(0..nv);
            for c in &blocks.blocks {
                join(&mut self.parent, c.dof_blocks());
            }
            for r in &blocks.bilateral {
                join(&mut self.parent, r.dof_blocks());
            }
            self.island_of_root.clear();
            self.island_of_root.resize(nv, usize::MAX);
            let mut count = 0;
            let firsts = blocks
                .blocks
                .iter()
                .map(|c| c.dof_blocks().next())
                .chain(blocks.bilateral.iter().map(|r| r.dof_blocks().next()));
            for first in firsts {
                // a constraint that moves nothing (no DOF block) is an island of its own
                let k = match first {
                    Some(d) => {
                        let root = find(&mut self.parent, d);
                        if self.island_of_root[root] == usize::MAX {
                            self.island_of_root[root] = count;
                            count += 1;
                        }
                        self.island_of_root[root]
                    }
                    None => {
                        count += 1;
                        count - 1
                    }
                };
                self.island.push(k);
            }
            group(&self.island[..nc], count, &mut self.contacts, &mut self.contact_start);
            group(&self.island[nc..], count, &mut self.rows, &mut self.row_start);
        } else {
            self.contacts.clear();
            self.contacts.extend(0..nc);
            self.contact_start.clear();
            self.contact_start.extend([0, nc]);
            self.rows.clear();
            self.rows.extend(0..nb);
            self.row_start.clear();
            self.row_start.extend([0, nb]);
        }
    }

    /// Number of islands.
    pub fn len(&self) -> usize {
        self.contact_start.len().saturating_sub(1)
    }

    /// The contacts of island `k`, in problem order.
    pub fn contacts(&self, k: usize) -> &[usize] {
        &self.contacts[self.contact_start[k]..self.contact_start[k + 1]]
    }

    /// The bilateral rows of island `k`, in problem order.
    pub fn rows(&self, k: usize) -> &[usize] {
        &self.rows[self.row_start[k]..self.row_start[k + 1]]
    }
}

/// Joins the DOF blocks `dofs` (first velocity indices) into one tree of the forest `parent`.
fn join(parent: &mut [usize], mut dofs: impl Iterator<Item = usize>) {
    if let Some(first) = dofs.next() {
        let a = find(parent, first);
        for d in dofs {
            let b = find(parent, d);
            parent[b] = a;
        }
    }
}

/// The root of `x` in the union–find forest `parent` (path halving).
fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Lists the indices `i` with `island[i] = k` for every `k < count`, island after island, into
/// `members` with the bounds in `start` (`count + 1` entries).
fn group(island: &[usize], count: usize, members: &mut Vec<usize>, start: &mut Vec<usize>) {
    start.clear();
    start.resize(count + 1, 0);
    for &k in island {
        start[k + 1] += 1;
    }
    for k in 0..count {
        start[k + 1] += start[k];
    }
    members.clear();
    members.resize(island.len(), 0);
    let mut cursor = start[..count].to_vec();
    for (i, &k) in island.iter().enumerate() {
        members[cursor[k]] = i;
        cursor[k] += 1;
    }
}
