package meters

// PurgeRows is at most how many figure rows one page of a deleted meter's purge deletes
// (CONTRACT §21): a short transaction, a bounded amount of WAL, whatever the meter's size.
const PurgeRows = 5000
