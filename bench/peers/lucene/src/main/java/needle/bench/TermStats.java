package needle.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.store.Directory;
import org.apache.lucene.util.BytesRef;

/**
 * Writes Lucene's term statistics for a corpus indexed exactly as {@link Golden} does ({@link
 * CorpusIndex}), for checking Needle's index against it.
 *
 * <pre>
 * TermStats --corpus FILE.jsonl[.gz] --out FILE.tsv
 * </pre>
 *
 * <p>Output, TSV: first one line per text field, {@code #field name docCount sumTotalTermFreq
 * sumDocFreq}; then one line per term, {@code field term docFreq totalTermFreq}, by field name and
 * then term bytes (Lucene's {@link BytesRef} order). Tab, newline and backslash in terms are written
 * as {@code \t}, {@code \n}, {@code \\}. The internal {@code _id} field is left out.
 */
public final class TermStats {
  private TermStats() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 4 || !args[0].equals("--corpus") || !args[2].equals("--out")) {
      System.err.println("usage: TermStats --corpus FILE.jsonl[.gz] --out FILE.tsv");
      System.exit(2);
    }
    Path corpus = Path.of(args[1]);
    Path out = Path.of(args[3]);

    long t0 = System.nanoTime();
    try (Directory dir = new ByteBuffersDirectory()) {
      List<String> ids = new ArrayList<>();
      SortedSet<String> fields = CorpusIndex.index(corpus, dir, ids);
      long t1 = System.nanoTime();
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        CorpusIndex.checkDocOrder(reader, ids); // also ensures a single segment
        long terms = write(reader.leaves().get(0).reader(), fields, out);
        System.err.printf(
            "indexed %d docs, fields %s in %.2f s; wrote %d terms to %s in %.2f s%n",
            ids.size(), fields, (t1 - t0) / 1e9, terms, out, (System.nanoTime() - t1) / 1e9);
      }
    }
  }

  /** Writes the field lines, then the term lines; returns the number of term lines. */
  private static long write(LeafReader leaf, SortedSet<String> fields, Path out)
      throws IOException {
    Path parent = out.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    long count = 0;
    try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
      for (String field : fields) {
        Terms terms = Terms.getTerms(leaf, field); // empty, not null, for a field without terms
        w.write("#field\t" + field + "\t" + terms.getDocCount() + "\t"
            + terms.getSumTotalTermFreq() + "\t" + terms.getSumDocFreq() + "\n");
      }
      // A TermsEnum walks its field's terms in BytesRef (unsigned byte) order.
      for (String field : fields) {
        TermsEnum te = Terms.getTerms(leaf, field).iterator();
        for (BytesRef term = te.next(); term != null; term = te.next(), count++) {
          w.write(field + "\t" + escape(term.utf8ToString()) + "\t" + te.docFreq() + "\t"
              + te.totalTermFreq() + "\n");
        }
      }
    }
    return count;
  }

  /** Escapes backslash, tab and newline as {@code \\}, {@code \t}, {@code \n}. */
  private static String escape(String term) {
    if (term.indexOf('\\') < 0 && term.indexOf('\t') < 0 && term.indexOf('\n') < 0) {
      return term;
    }
    return term.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n");
  }
}
