/**
 * Image references as containerd's CRI plugin stores them: normalized like
 * `github.com/distribution/reference` `ParseDockerRef` (`nginx` → `docker.io/library/nginx:latest`),
 * so `PullImage("nginx")` and `ImageStatus("docker.io/library/nginx:latest")` name one image.
 */

/** Normalizes a Docker image reference (domain, `library/` for official images, `:latest` tag). */
export function normalizeImage(ref: string): string {
  const r = ref.trim();
  const slash = r.indexOf('/');
  const first = slash < 0 ? '' : r.slice(0, slash);
  const hasDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  let name = hasDomain ? r : `docker.io/${slash < 0 ? `library/${r}` : r}`;
  if (name.startsWith('docker.io/') && name.indexOf('/', 'docker.io/'.length) < 0) name = `docker.io/library/${name.slice(10)}`;
  const last = name.slice(name.lastIndexOf('/') + 1);
  return last.includes(':') || last.includes('@') ? name : `${name}:latest`;
}
