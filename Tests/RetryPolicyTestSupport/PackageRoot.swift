import Foundation

/// The package's root folder: the nearest folder above this file that holds `Package.swift`.
///
/// Tests read `Samples/`, `Grammar/`, the sources and their golden files from it, wherever
/// their own file lies.
public let packageRoot: URL = {
  let start = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  var folder = start
  while folder.path != "/" {
    if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
      return folder
    }
    folder = folder.deletingLastPathComponent()
  }
  return start
}()
