package settings

import "context"

// Hold takes ns's write lock as Update does, so a test can play a writer that keeps it.
func (s *Service) Hold(ctx context.Context, ns string) (unlock func(), err error) {
	return s.writers.lock(ctx, ns)
}
