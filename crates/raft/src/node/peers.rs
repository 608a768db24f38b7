//! The peer list a node is started with (`--peers=1=127.0.0.1:7001,2=...`) and how it is held
//! against the cluster's membership.
//!
//! Two checks, both naming the nodes that disagree:
//! - at start, against the membership the node's own store holds ([`restart_disagreement`]):
//!   the peer list must name exactly the membership's nodes (voters and learners) at the same
//!   addresses; after a membership change, restart with the new list;
//! - at run time, against a membership that arrives from a leader (an append or a snapshot:
//!   [`conflict`]): a node the list names must be at the address the list gives. Nodes the list
//!   does not name may come (a learner being added), so only a contradiction is refused.

use std::collections::BTreeMap;

use crate::types::{Membership, NodeId};

/// Node id to address.
pub type Peers = BTreeMap<NodeId, String>;

/// Parses `1=host:port,2=host:port,...` (every node of the cluster, this one included).
pub fn parse(s: &str) -> Result<Peers, String> {
    let mut out = Peers::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((id, addr)) = part.split_once('=') else {
            return Err(format!("--peers: {part:?} is not ID=HOST:PORT"));
        };
        let id: NodeId =
            id.trim().parse().map_err(|_| format!("--peers: {id:?} is not a node id"))?;
        let addr = addr.trim();
        if addr.is_empty() || !addr.contains(':') {
            return Err(format!("--peers: node {id}'s address {addr:?} is not HOST:PORT"));
        }
        if out.insert(id, addr.to_string()).is_some() {
            return Err(format!("--peers: node {id} is listed twice"));
        }
    }
    if out.is_empty() {
        return Err("--peers: no node listed".into());
    }
    Ok(out)
}

fn nodes_of(m: &Membership) -> Peers {
    m.nodes().map(|(id, n)| (*id, n.addr.clone())).collect()
}

/// Where `peers` contradicts `membership`: a node both name at different addresses. `None` if
/// they agree on every node both name.
pub fn conflict(peers: &Peers, membership: &Membership) -> Option<String> {
    let diffs: Vec<String> = nodes_of(membership)
        .iter()
        .filter_map(|(id, addr)| match peers.get(id) {
            Some(mine) if mine != addr => Some(format!(
                "node {id} is at {mine} in --peers but at {addr} in the cluster's membership"
            )),
            _ => None,
        })
        .collect();
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

/// Where `peers` differs from the stored `membership` at a restart: [`conflict`], and nodes
/// one names and the other does not. `None` if they name the same nodes at the same addresses.
pub fn restart_disagreement(peers: &Peers, membership: &Membership) -> Option<String> {
    let theirs = nodes_of(membership);
    let mut diffs: Vec<String> = conflict(peers, membership).into_iter().collect();
    for id in peers.keys().filter(|id| !theirs.contains_key(id)) {
        diffs.push(format!("node {id} is in --peers but not in the cluster's membership"));
    }
    for id in theirs.keys().filter(|id| !peers.contains_key(id)) {
        diffs.push(format!("node {id} is in the cluster's membership but not in --peers"));
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::types::Node;

    fn membership(nodes: &[(NodeId, &str)], voters: &[NodeId]) -> Membership {
        let nodes = nodes
            .iter()
            .map(|(id, a)| (*id, Node { addr: a.to_string() }))
            .collect::<BTreeMap<_, _>>();
        Membership::new(vec![voters.iter().copied().collect::<BTreeSet<_>>()], nodes)
    }

    #[test]
    fn parses_and_refuses_bad_lists() {
        let p = parse("1=127.0.0.1:7001, 2=127.0.0.1:7002,3=h:3").unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p[&2], "127.0.0.1:7002");
        for bad in ["", "1", "x=a:1", "1=a:1,1=a:2", "1=nohostport"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_the_nodes_that_disagree() {
        let m = membership(&[(1, "a:1"), (2, "b:2"), (3, "c:3")], &[1, 2, 3]);
        let same = parse("1=a:1,2=b:2,3=c:3").unwrap();
        assert_eq!(conflict(&same, &m), None);
        assert_eq!(restart_disagreement(&same, &m), None);
        let moved = parse("1=a:1,2=b:9,3=c:3").unwrap();
        let e = conflict(&moved, &m).unwrap();
        assert!(e.contains("node 2 is at b:9 in --peers but at b:2"), "{e}");
        let fewer = parse("1=a:1,2=b:2").unwrap();
        assert_eq!(conflict(&fewer, &m), None, "a learner being added is no conflict");
        let e = restart_disagreement(&fewer, &m).unwrap();
        assert!(e.contains("node 3 is in the cluster's membership but not in --peers"), "{e}");
        let more = parse("1=a:1,2=b:2,3=c:3,4=d:4").unwrap();
        let e = restart_disagreement(&more, &m).unwrap();
        assert!(e.contains("node 4 is in --peers but not in the cluster's membership"), "{e}");
    }
}
