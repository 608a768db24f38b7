//! HTTP/1.1 on hyper alone: [`serve`] runs a handler for every request on a listener, and
//! [`HttpClient`] sends requests over kept-alive connections, a few per address, reused.
//!
//! Why hyper without a framework: the service has a dozen routes of JSON in and JSON out, which
//! a `match` on the path handles; axum and reqwest would add tower, a router, URL and TLS
//! stacks and their compile time for nothing used here (docs/design/replication.md,
//! "Network").
//!
//! Errors: [`HttpError::Unreachable`] when no connection could be made (nothing was sent: safe
//! to retry anywhere), [`HttpError::Timeout`] and [`HttpError::Io`] when the request may have
//! been received (its effect is unknown).

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};

/// A request as the handler sees it.
pub struct Incoming {
    /// `GET` or `POST`.
    pub method: Method,
    /// The path (`/api/write`).
    pub path: String,
    /// The whole body.
    pub body: Bytes,
}

/// A reply: status and JSON body.
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body (JSON).
    pub body: Vec<u8>,
}

/// Accepts connections on `listener` for ever, answering each request with `handler`.
pub async fn serve<H, F>(listener: TcpListener, handler: H)
where
    H: Fn(Incoming) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Reply> + Send + 'static,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors and the like: back off, keep serving.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let handler = handler.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req: Request<hyper::body::Incoming>| {
                let handler = handler.clone();
                async move {
                    let method = req.method().clone();
                    let path = req.uri().path().to_string();
                    let reply = match req.into_body().collect().await {
                        Ok(b) => handler(Incoming { method, path, body: b.to_bytes() }).await,
                        Err(e) => Reply {
                            status: StatusCode::BAD_REQUEST,
                            body: format!("{{\"error\":\"reading the body: {e}\"}}").into_bytes(),
                        },
                    };
                    let mut resp = Response::new(Full::new(Bytes::from(reply.body)));
                    *resp.status_mut() = reply.status;
                    resp.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, Infallible>(resp)
                }
            });
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
        });
    }
}

/// Why a request got no reply.
#[derive(Debug, Clone)]
pub enum HttpError {
    /// No connection could be made: the request was not sent.
    Unreachable(String),
    /// No reply in time: the request may have been received.
    Timeout,
    /// The connection failed after the request was sent.
    Io(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Unreachable(e) => write!(f, "unreachable: {e}"),
            HttpError::Timeout => write!(f, "timed out"),
            HttpError::Io(e) => write!(f, "connection failed: {e}"),
        }
    }
}

impl std::error::Error for HttpError {}

type Sender = SendRequest<Full<Bytes>>;

/// An HTTP client with a pool of idle connections per address.
#[derive(Default, Clone)]
pub struct HttpClient {
    idle: Arc<Mutex<HashMap<String, Vec<Sender>>>>,
}

/// Idle connections kept per address.
const MAX_IDLE: usize = 16;

impl HttpClient {
    /// A client with no connections yet.
    pub fn new() -> HttpClient {
        HttpClient::default()
    }

    async fn connect(addr: &str) -> Result<Sender, HttpError> {
        let stream =
            TcpStream::connect(addr).await.map_err(|e| HttpError::Unreachable(e.to_string()))?;
        let _ = stream.set_nodelay(true);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| HttpError::Unreachable(e.to_string()))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// Sends `method path` with `body` to `addr` and returns the status and body of the reply,
    /// within `timeout` (connecting included).
    pub async fn request(
        &self,
        addr: &str,
        method: Method,
        path: &str,
        body: Vec<u8>,
        timeout: Duration,
    ) -> Result<(StatusCode, Bytes), HttpError> {
        match tokio::time::timeout(timeout, self.request_inner(addr, method, path, body)).await {
            Ok(r) => r,
            Err(_) => Err(HttpError::Timeout),
        }
    }

    async fn request_inner(
        &self,
        addr: &str,
        method: Method,
        path: &str,
        body: Vec<u8>,
    ) -> Result<(StatusCode, Bytes), HttpError> {
        let build = || {
            Request::builder()
                .method(method.clone())
                .uri(path)
                .header(hyper::header::HOST, addr)
                .header(hyper::header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(body.clone())))
                .map_err(|e| HttpError::Io(e.to_string()))
        };
        let pooled = self.idle.lock().get_mut(addr).and_then(Vec::pop);
        let (mut sender, mut fresh) = match pooled {
            Some(s) if !s.is_closed() => (s, false),
            _ => (Self::connect(addr).await?, true),
        };
        let resp = loop {
            if sender.ready().await.is_err() {
                if fresh {
                    return Err(HttpError::Unreachable("the connection closed at once".into()));
                }
                (sender, fresh) = (Self::connect(addr).await?, true);
                continue;
            }
            match sender.try_send_request(build()?).await {
                Ok(resp) => break resp,
                // Not sent (the pooled connection had closed): once more on a new one.
                Err(e) if e.message().is_some() && !fresh => {
                    (sender, fresh) = (Self::connect(addr).await?, true);
                }
                Err(e) => return Err(HttpError::Io(e.into_error().to_string())),
            }
        };
        let status = resp.status();
        let body = resp.into_body().collect().await.map_err(|e| HttpError::Io(e.to_string()))?;
        let mut idle = self.idle.lock();
        let list = idle.entry(addr.to_string()).or_default();
        if list.len() < MAX_IDLE {
            list.push(sender);
        }
        Ok((status, body.to_bytes()))
    }
}
