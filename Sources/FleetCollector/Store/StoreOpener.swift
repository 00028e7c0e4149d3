/// Opens the store a `--database` URL names and prepares its schema.
public enum StoreOpener {
    /// The store of `url`, its schema created or checked.
    /// - Throws: ``FleetCollectorError`` `.cannotOpenDatabase` (or `.badDatabaseURL`).
    public static func open(_ url: DatabaseURL) async throws -> any ReportStore {
        switch url {
        case .sqlite(let path):
            let store = try SQLiteReportStore(path: path)
            do {
                try await store.prepare()
            } catch {
                await store.close()
                throw error
            }
            return store
        case .postgres(let components):
            let store = try PostgresReportStore(url: components)
            do {
                try await store.prepare()
            } catch {
                await store.close()
                throw error
            }
            return store
        }
    }
}
