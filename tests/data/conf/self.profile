include self
