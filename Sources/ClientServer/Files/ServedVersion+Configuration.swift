import ServingCore

extension ServedVersion {
    /// Loads `serving/<id>/` with the memory limits of `configuration`.
    /// - Throws: ``ServerError`` `.noServingFolder`.
    package static func load(directory: String, configuration: ServerConfiguration) throws -> ServedVersion {
        do {
            return try load(
                directory: directory, memoryCacheFileLimit: configuration.memoryCacheFileLimit,
                memoryCacheTotalLimit: configuration.memoryCacheTotalLimit)
        } catch let error as ServingError {
            throw ServerError(error)
        }
    }
}

extension ServerError {
    /// The serving core's error as the server's, with the same message and kind.
    package init(_ error: ServingError) {
        let code: ServerErrorCode = error.code == .invalidConfiguration ? .invalidConfiguration : .noServingFolder
        self.init(code, error.message, underlying: error.underlying)
    }
}
