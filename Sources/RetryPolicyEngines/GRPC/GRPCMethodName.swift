/// One entry of a method config's `name` list.
package struct GRPCMethodName: Equatable {
  var service: String
  var method: String

  package init(service: String, method: String) {
    self.service = service
    self.method = method
  }
}
