/// Where a task's response body goes, decided by what the task is: kept in memory for its serializer, written to a
/// download's file, or handed chunk by chunk to a streaming consumer (``DataStreamTask``). Every step that treats
/// bodies differently asks this one value (`TaskDelegate.sink`), never the task's class or its parts.
enum BodySink {
    /// Collected in the task's state, for the serializer.
    case memory
    /// Written to the download's file.
    case file(DownloadFile)
    /// Handed to the consumer of a streamed body.
    case stream(ChunkHandoff)

    /// Whether the body is kept in memory (and so bounded by the configuration's in-memory limit).
    var keepsInMemory: Bool {
        if case .memory = self { return true }
        return false
    }

    /// Whether the body goes to a download's file.
    var isFile: Bool {
        if case .file = self { return true }
        return false
    }

    /// The streaming consumer, if the body goes to one.
    var stream: ChunkHandoff? {
        if case .stream(let handoff) = self { return handoff }
        return nil
    }
}
