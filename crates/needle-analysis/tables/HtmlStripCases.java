import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.lucene.analysis.charfilter.HTMLStripCharFilter;

/**
 * Runs Lucene's HTMLStripCharFilter on each line of standard input (the text
 * as hex of its UTF-8, a tab, the escaped tags joined by commas) and prints
 * the output as hex, a tab, and correctOffset of every output offset (UTF-16
 * units), for html_strip_cases.py.
 */
public class HtmlStripCases {
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff)); return b.toString(); }
  static String unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return new String(b, StandardCharsets.UTF_8); }
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      String text = unhex(parts[0]);
      Set<String> escaped = new HashSet<>();
      if (parts.length > 1 && !parts[1].isEmpty()) escaped.addAll(Arrays.asList(parts[1].split(",")));
      HTMLStripCharFilter cf = new HTMLStripCharFilter(new StringReader(text), escaped);
      StringBuilder out = new StringBuilder(); char[] buf = new char[64]; int n;
      while ((n = cf.read(buf, 0, buf.length)) > 0) out.append(buf, 0, n);
      StringBuilder offs = new StringBuilder();
      for (int i = 0; i <= out.length(); i++) { if (i > 0) offs.append(','); offs.append(cf.correctOffset(i)); }
      System.out.println(hex(out.toString()) + "\t" + offs);
    }
  }
}
