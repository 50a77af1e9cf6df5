// A program written against @revops/client as a user would write it. The test compiles it
// with `tsc --strict` (importing the package by name, through its `exports`) and runs it.
import { Revops, RevopsError, verifyWebhook, isEventType, WebhookVerificationError, } from "@revops/client";
const revops = new Revops({ apiKey: process.env.REVOPS_API_KEY ?? "sk_sandbox_placeholder", maxRetries: 1 });
// Types flow from the document: parameters, results, list items.
const query = { limit: 10, status: "draft" };
async function firstDraft() {
    for await (const deal of revops.listDealsAll(query))
        return deal;
    return undefined;
}
function describe(e) {
    if (isEventType(e, "deal-signed"))
        return `deal ${e.deal.id} signed for ${e.deal.net_price ?? "?"}`;
    if (isEventType(e, "account-created"))
        return `account ${e.account.name}`;
    if (isEventType(e, "endpoint-disabled"))
        return `endpoint ${e.webhook_endpoint.id} disabled`;
    return e.event.type;
}
try {
    verifyWebhook("{}", { "webhook-id": "x", "webhook-timestamp": "0", "webhook-signature": "v1,x" }, "whsec_" + "A".repeat(44));
}
catch (err) {
    if (!(err instanceof WebhookVerificationError))
        throw err;
    console.log("refused webhook:", err.reason);
}
if (process.env.REVOPS_BASE_URL && process.env.REVOPS_API_KEY) {
    const who = await revops.whoami();
    console.log("whoami", who.environment);
    const d = await firstDraft();
    console.log("first draft", d?.id ?? "none");
    try {
        await revops.getDeal("00000000-0000-0000-0000-000000000000");
    }
    catch (err) {
        if (err instanceof RevopsError)
            console.log("typed error", err.status, err.code);
        else
            throw err;
    }
}
export { describe };
