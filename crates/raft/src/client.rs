//! [`KvClient`]: a client of the replicated key-value service that finds the leader and says,
//! for each write, whether it took effect, did not, or may have ([`Outcome`]) — what a
//! linearizability check needs.
//!
//! It sends to the node it believes leads; on [`ApiReply::NotLeader`] (nothing was done) it
//! follows the hint or tries the next node, and on a connection that cannot be made (nothing
//! was sent) the next node, until the deadline. A write whose request may have arrived (a
//! timeout, a connection cut, [`ApiReply::Unknown`]) is never resent: resending could apply it
//! twice around other writes. Reads change nothing and are retried freely.

use std::time::{Duration, Instant};

use hyper::Method;
use parking_lot::Mutex;
use serde::de::DeserializeOwned;

use crate::net::http::{HttpClient, HttpError};
use crate::node::{ApiReply, ReadRequest};
use crate::types::Request;

/// How an operation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<T> {
    /// It took effect, with this result.
    Done(T),
    /// It did not take effect (nothing was proposed), e.g. no leader before the deadline.
    Failed(String),
    /// A write that may or may not take effect.
    Unknown(String),
}

/// A client of a cluster's nodes.
pub struct KvClient {
    http: HttpClient,
    /// The nodes' addresses (a leader hint that names another is added), and the index of the
    /// one to try first.
    nodes: Mutex<(Vec<String>, usize)>,
    /// Each request's timeout.
    pub request_timeout: Duration,
    /// How long an operation keeps looking for a leader.
    pub deadline: Duration,
}

enum Attempt<T> {
    Reply(ApiReply<T>),
    Unreachable(String),
    Lost(String),
}

impl KvClient {
    /// A client of the nodes at `addrs` (at least one).
    pub fn new(addrs: Vec<String>) -> KvClient {
        KvClient {
            http: HttpClient::new(),
            nodes: Mutex::new((addrs, 0)),
            request_timeout: Duration::from_secs(2),
            deadline: Duration::from_secs(10),
        }
    }

    async fn attempt<T: DeserializeOwned>(
        &self,
        addr: &str,
        path: &str,
        body: &[u8],
    ) -> Attempt<T> {
        let r = self.http.request(addr, Method::POST, path, body.to_vec(), self.request_timeout);
        match r.await {
            Err(HttpError::Unreachable(e)) => Attempt::Unreachable(e),
            Err(e) => Attempt::Lost(e.to_string()),
            Ok((status, body)) if status.is_success() => match serde_json::from_slice(&body) {
                Ok(reply) => Attempt::Reply(reply),
                Err(e) => Attempt::Lost(format!("a reply that is not JSON: {e}")),
            },
            Ok((status, body)) => Attempt::Reply(ApiReply::Error(format!(
                "{status}: {}",
                String::from_utf8_lossy(&body)
            ))),
        }
    }

    /// Sends to the leader, following hints, until a reply that is not `NotLeader`.
    async fn send<T: DeserializeOwned>(
        &self,
        path: &str,
        body: Vec<u8>,
        retry_lost: bool,
    ) -> Outcome<T> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(5);
        let mut last = String::from("none");
        loop {
            let addr = {
                let n = self.nodes.lock();
                match n.0.get(n.1) {
                    Some(a) => a.clone(),
                    None => return Outcome::Failed("no node address".into()),
                }
            };
            let rotate = || {
                let mut n = self.nodes.lock();
                n.1 = (n.1 + 1) % n.0.len().max(1);
            };
            match self.attempt::<T>(&addr, path, &body).await {
                Attempt::Reply(ApiReply::Ok(v)) => return Outcome::Done(v),
                Attempt::Reply(ApiReply::Unknown(e)) => return Outcome::Unknown(e),
                Attempt::Reply(ApiReply::Error(e)) => {
                    if !retry_lost {
                        return Outcome::Failed(e);
                    }
                    last = e;
                    rotate();
                }
                Attempt::Reply(ApiReply::NotLeader { leader_addr, .. }) => match leader_addr {
                    Some(l) if l != addr => {
                        let mut n = self.nodes.lock();
                        n.1 = match n.0.iter().position(|a| *a == l) {
                            Some(i) => i,
                            None => {
                                n.0.push(l);
                                n.0.len() - 1
                            }
                        };
                    }
                    _ => rotate(),
                },
                Attempt::Unreachable(e) => {
                    last = e;
                    rotate();
                }
                Attempt::Lost(e) => {
                    if !retry_lost {
                        return Outcome::Unknown(e);
                    }
                    last = e;
                    rotate();
                }
            }
            if start.elapsed() > self.deadline {
                return Outcome::Failed(format!("no leader answered in time (last error: {last})"));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }

    /// Sets `key` to `value`; `Done` carries the entry's log index.
    pub async fn put(&self, key: &str, value: &str) -> Outcome<u64> {
        self.write(&Request::Put { key: key.into(), value: value.into() }).await
    }

    /// Deletes `key`.
    pub async fn delete(&self, key: &str) -> Outcome<u64> {
        self.write(&Request::Delete { key: key.into() }).await
    }

    /// Proposes `req`.
    pub async fn write(&self, req: &Request) -> Outcome<u64> {
        match serde_json::to_vec(req) {
            Ok(body) => self.send("/api/write", body, false).await,
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// Reads `key` linearizably.
    pub async fn get(&self, key: &str) -> Outcome<Option<String>> {
        match serde_json::to_vec(&ReadRequest { key: key.into() }) {
            Ok(body) => self.send("/api/read", body, true).await,
            Err(e) => Outcome::Failed(e.to_string()),
        }
    }

    /// The address this client sends to first.
    pub fn leader_guess(&self) -> String {
        let n = self.nodes.lock();
        n.0.get(n.1).cloned().unwrap_or_default()
    }
}
