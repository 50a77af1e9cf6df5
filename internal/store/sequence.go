package store

import (
	"fmt"
	"slices"
	"strings"

	"github.com/revops/revops/models"
)

// Migration 136: the event sequence and the order lanes of CONTRACT §26. An object's
// sequence row counts its events (per environment); the change that writes events takes
// it (an upsert, whose row lock it holds until commit), so commit order is sequence order
// whatever the replicas' clocks. The delivery columns copy what a lane is read by (the
// event's object and number, the endpoint's ordering when the delivery was created) and
// the event a waiting delivery waits behind. Adding columns with constant defaults
// changes only PostgreSQL's catalog.
//
// Migration 137: the lane index, of unfinished ordered deliveries only (the lanes' heads
// and waiting ones, a small share of a large table): what a lane decision reads. Built
// concurrently: the table is large and written on every change.
func init() {
	register(migration{version: 136, name: "event_sequences", sql: `
CREATE TABLE object_sequences (
	environment_id TEXT NOT NULL,
	object_id TEXT NOT NULL,
	last_sequence BIGINT NOT NULL,
	PRIMARY KEY (environment_id, object_id)
);
ALTER TABLE events ADD COLUMN sequence BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none';
ALTER TABLE webhook_deliveries ADD COLUMN object_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN sequence BIGINT;
ALTER TABLE webhook_deliveries ADD COLUMN ordered BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE webhook_deliveries ADD COLUMN waiting_for TEXT NOT NULL DEFAULT ''`})
	register(migration{version: 137, name: "webhook_deliveries_lane", noTx: true, sql: `
CREATE INDEX {{concurrently}} IF NOT EXISTS webhook_deliveries_lane ON webhook_deliveries (endpoint_id, object_id, sequence)
	WHERE ordered AND status IN ('pending', 'retrying')`})
}

// sequenceChunk bounds the objects of one sequence upsert (three parameters each).
const sequenceChunk = 1000

// numberEvents gives each event its Sequence (CONTRACT §26): for each distinct object of
// the change, one upsert of its sequence row adds the number of its events and returns
// the last, and its events take the numbers below it in the order they were emitted. The
// rows are taken in object id order (a change about several objects — a consumer step's
// alerts — locks them as every other change does: no deadlock between two), and the
// upsert's row lock, held until commit, is the object's lane lock: it comes before any
// event's in every transaction that takes both (§26's lock order). All objects go in one
// statement (per sequenceChunk): one round trip per change, as before.
func numberEvents(tx *Tx, events []models.Event) error {
	counts := map[string]int64{}
	var objects []string
	for _, ev := range events {
		if counts[ev.ObjectID] == 0 {
			objects = append(objects, ev.ObjectID)
		}
		counts[ev.ObjectID]++
	}
	slices.Sort(objects)
	last := make(map[string]int64, len(objects))
	for chunk := range slices.Chunk(objects, sequenceChunk) {
		if err := upsertSequences(tx, chunk, counts, last); err != nil {
			return err
		}
	}
	next := make(map[string]int64, len(objects))
	for o, l := range last {
		next[o] = l - counts[o] + 1
	}
	for i := range events {
		n := next[events[i].ObjectID]
		events[i].Sequence = &n
		next[events[i].ObjectID] = n + 1
	}
	return nil
}

// upsertSequences adds counts to the sequence rows of objects (in the order given) and
// records each one's new last number in last.
func upsertSequences(tx *Tx, objects []string, counts, last map[string]int64) error {
	values := make([]string, len(objects))
	args := make([]any, 0, 3*len(objects))
	for i, o := range objects {
		values[i] = "(?, ?, ?)"
		args = append(args, tx.env.ID, o, counts[o])
	}
	var rows []struct {
		ObjectID     string
		LastSequence int64
	}
	err := tx.db.Raw(`INSERT INTO object_sequences (environment_id, object_id, last_sequence) VALUES `+
		strings.Join(values, ", ")+`
	ON CONFLICT (environment_id, object_id) DO UPDATE SET last_sequence = object_sequences.last_sequence + excluded.last_sequence
	RETURNING object_id, last_sequence`, args...).Scan(&rows).Error
	if err != nil {
		return fmt.Errorf("number the events: %w", err)
	}
	if len(rows) != len(objects) {
		return fmt.Errorf("number the events: %d sequence rows for %d objects", len(rows), len(objects))
	}
	for _, r := range rows {
		last[r.ObjectID] = r.LastSequence
	}
	return nil
}
