//! A small fake HTTP server on 127.0.0.1 for tests: a `TcpListener` in a thread answers a
//! bounded number of requests from a handler (request index, captured request) -> canned
//! response, records what it received, and stops by itself after its last request or a
//! deadline, so no test can leave it running.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A fake server never outlives this, even if the client under test never calls.
pub const SERVER_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct Captured {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub raw_headers: String,
    pub body: Value,
}

pub struct Canned {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub delay: Duration,
}

pub fn ok(body: Value) -> Canned {
    Canned {
        status: 200,
        headers: vec![],
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

pub fn status(code: u16, body: &str) -> Canned {
    Canned {
        status: code,
        headers: vec![],
        body: body.to_string(),
        delay: Duration::ZERO,
    }
}

pub type Handler = Box<dyn Fn(usize, &Captured) -> Canned + Send>;

pub struct FakeServer {
    pub url: String,
    pub captured: Arc<Mutex<Vec<Captured>>>,
    pub stop: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    /// Serves at most `max_requests` requests with `handler`.
    pub fn start(max_requests: usize, handler: Handler) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let captured = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&captured);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + SERVER_DEADLINE;
            let mut served = 0;
            while served < max_requests
                && Instant::now() < deadline
                && !stopped.load(Ordering::Relaxed)
            {
                match listener.accept() {
                    Ok((stream, _)) => {
                        if let Some(req) = read_request(&stream) {
                            log.lock().unwrap().push(req.clone());
                            let canned = handler(served, &req);
                            served += 1;
                            write_response(stream, &canned);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FakeServer {
            url,
            captured,
            stop,
            thread: Some(thread),
        }
    }

    pub fn hits(&self) -> usize {
        self.captured.lock().unwrap().len()
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.captured.lock().unwrap().clone()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        // The accept loop polls the flag, so the thread ends within a few milliseconds (or
        // after the response it is sending).
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn read_request(stream: &TcpStream) -> Option<Captured> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line).ok()?;
    let path = request_line.split_whitespace().nth(1)?.to_string();
    let mut headers = HashMap::new();
    let mut raw_headers = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        raw_headers.push_str(&line);
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).ok()?;
    Some(Captured {
        path,
        headers,
        raw_headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

pub fn write_response(mut stream: TcpStream, c: &Canned) {
    std::thread::sleep(c.delay);
    let mut head = format!(
        "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        c.status,
        c.body.len()
    );
    for (k, v) in &c.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(c.body.as_bytes());
    let _ = stream.flush();
}
