// Versions, digests, atomic files and the error protocol come from ClientFoundation; a
// device-side module or host that imports ClientUpdater sees them without a second import.
@_exported import ClientFoundation
