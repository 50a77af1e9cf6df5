import { Revops, RevopsError } from "@revops/client";
// Reads REVOPS_API_KEY (a secret key) and REVOPS_BASE_URL, e.g. from `revops dev`.
const revops = new Revops();
const me = await revops.whoami();
console.log(`${me.organization.name} (${me.environment}, ${me.type} key)`);
const account = await revops.createAccount({ name: "Acme Corp", billing_email: "billing@acme.example" });
const deal = await revops.createDeal({
    customer: { id: account.id },
    net_price: "19999.00",
    net_price_currency: "USD",
    net_price_precision: "2",
});
console.log(`created deal ${deal.id} (${deal.status}) for ${deal.customer.name}`);
try {
    await revops.signDeal(deal.id); // a draft cannot be signed yet
}
catch (err) {
    if (!(err instanceof RevopsError))
        throw err;
    console.log(`refused: ${err.status} ${err.code}: ${err.message}`);
}
await revops.submitDeal(deal.id);
await revops.approveDeal(deal.id);
await revops.signDeal(deal.id);
console.log(`now ${(await revops.activateDeal(deal.id)).status}`);
for await (const d of revops.listDealsAll({ customer: account.id, limit: 50 })) {
    console.log(d.id, d.status, d.net_price, d.net_price_currency);
}
