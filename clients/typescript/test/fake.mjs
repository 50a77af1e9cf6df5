// A local HTTP server standing in for Revops in unit tests: each test scripts the answers.
import { createServer } from "node:http";

/**
 * Starts a server whose answers come from `respond(req, body, n)` (n counts requests from
 * 0). Returns the base URL, every request seen (method, url, headers, body, time) and close().
 */
export async function fakeRevops(respond) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString();
    const n = requests.length;
    requests.push({ method: req.method, url: req.url, headers: req.headers, body, at: Date.now() });
    const answer = await respond(req, body, n);
    if (answer === "destroy") return req.socket.destroy();
    const { status = 200, headers = {}, json, text } = answer;
    const payload = json !== undefined ? JSON.stringify(json) : (text ?? "");
    res.writeHead(status, { "Content-Type": json !== undefined ? "application/json" : "text/plain", ...headers });
    res.end(payload);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** A §4 error envelope. */
export function apiError(status, type, code, extra = {}) {
  return { status, headers: { "X-Request-Id": "req_header" }, json: { error: { type, code, message: `${code} happened`, request_id: "req_body", ...extra } } };
}
