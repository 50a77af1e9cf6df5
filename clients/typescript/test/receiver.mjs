// An HTTPS webhook receiver on 127.0.0.1 for the integration tests. Revops delivers only
// to https:// URLs and `revops dev` trusts its local CA (<data dir>/ca.pem) for them, so
// the receiver's certificate is issued from that CA with the openssl command.
import { createServer } from "node:https";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function issueCertificate(dataDir) {
  const dir = mkdtempSync(join(tmpdir(), "revops-ts-receiver-"));
  try {
    const file = (name) => join(dir, name);
    writeFileSync(file("ext.cnf"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
    const run = (args) => execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
    run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", file("key.pem"), "-subj", "/CN=127.0.0.1", "-out", file("csr.pem")]);
    run(["x509", "-req", "-in", file("csr.pem"), "-CA", join(dataDir, "ca.pem"), "-CAkey", join(dataDir, "ca-key.pem"),
      "-set_serial", String(Date.now()), "-days", "2", "-sha256", "-extfile", file("ext.cnf"), "-out", file("cert.pem")]);
    return { key: readFileSync(file("key.pem")), cert: readFileSync(file("cert.pem")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts the receiver; every delivery is kept with its raw body and headers. */
export async function httpsReceiver(dataDir) {
  const deliveries = [];
  const waiters = new Set();
  const server = createServer(issueCertificate(dataDir), async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const delivery = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() };
    deliveries.push(delivery);
    // Success per CONTRACT §8: status 200 and a body containing the sentence.
    res.writeHead(200, { "Content-Type": "text/plain" }).end("Revops API Event Received.");
    for (const w of waiters) w(delivery);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${server.address().port}`,
    deliveries,
    /** Resolves with the first delivery matching `match`, or rejects after ms. */
    waitFor(match, ms) {
      const seen = deliveries.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { waiters.delete(check); reject(new Error(`no matching webhook within ${ms} ms (${deliveries.length} received)`)); }, ms);
        const check = (d) => { if (match(d)) { clearTimeout(timer); waiters.delete(check); resolve(d); } };
        waiters.add(check);
      });
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}
